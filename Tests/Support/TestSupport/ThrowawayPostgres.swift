import Foundation
import Synchronization

/// A PostgreSQL server of the tests' own: a new cluster in a temporary folder, listening on
/// 127.0.0.1 and a free port, tuned for speed over durability (no fsync), stopped and deleted by
/// ``stop()``. Started from Debian's `postgresql` binaries (`.ci/run` installs them); nothing
/// depends on a server started by hand.
///
/// `initdb` and `pg_ctl` refuse to run as root: as root (CI, a container) they run as the
/// `postgres` user the package creates, through `runuser`; anyone else runs them as themselves.
/// Every command is spawned with none of the test process's descriptors (`spawnAndWait`): the
/// server outlives the command that starts it, and must not hold another test's sockets or
/// pipes. The steps block, so they run on a thread of their own, off the cooperative pool.
public final class ThrowawayPostgres: Sendable {
    /// The superuser the cluster is made with (trust authentication: no password).
    public let user = "stateloop"
    /// The loopback port it listens on.
    public let port: Int
    /// The temporary folder holding the cluster, its log and its socket.
    public let folder: URL
    /// Whether it accepts TLS connections only (``start(tls:)``).
    public let tls: Bool

    /// The CA that signed a TLS server's certificate (PEM; the certificate names `localhost`
    /// and `127.0.0.1`); `nil` without TLS.
    public var certificateAuthority: String? {
        tls ? folder.appendingPathComponent("ca.pem").path : nil
    }

    /// Another CA, which signed nothing this server shows: a client that trusts it alone must
    /// refuse the server's certificate. `nil` without TLS.
    public var otherCertificateAuthority: String? {
        tls ? folder.appendingPathComponent("other-ca.pem").path : nil
    }

    /// Where Debian puts the server's binaries (`/usr/lib/postgresql/<version>/bin`, the newest
    /// version installed); `STATELOOP_PG_BIN` overrides it.
    public static var binaries: String {
        if let chosen = ProcessInfo.processInfo.environment["STATELOOP_PG_BIN"] { return chosen }
        let root = "/usr/lib/postgresql"
        let versions = ((try? FileManager.default.contentsOfDirectory(atPath: root)) ?? []).compactMap(Int.init)
        return "\(root)/\(versions.max() ?? 15)/bin"
    }

    /// Whether the binaries are installed, so that a test can say why it cannot run.
    public static var isAvailable: Bool {
        FileManager.default.isExecutableFile(atPath: binaries + "/initdb")
    }

    /// The server the tests of this process share, started on first use and stopped as the
    /// process exits: each test takes a database of its own on it (``createDatabase(_:)``), so
    /// a suite pays for one cluster, not one a test.
    public static func shared() async throws -> ThrowawayPostgres {
        let starting = sharedServer.withLock { server in
            if let server { return server }
            let started = Task {
                let server = try await ThrowawayPostgres.start()
                startedShared.withLock { $0 = server }
                return server
            }
            server = started
            atexit { ThrowawayPostgres.stopSharedNow() }
            return started
        }
        return try await starting.value
    }

    private static let sharedServer = Mutex<Task<ThrowawayPostgres, any Error>?>(nil)
    private static let startedShared = Mutex<ThrowawayPostgres?>(nil)

    /// Stops the shared server, if it started, at once (immediate shutdown), on the calling
    /// thread: the process is exiting.
    private static func stopSharedNow() {
        guard let server = startedShared.withLock({ $0 }) else { return }
        try? server.run(Self.binaries + "/pg_ctl", ["-D", server.folder.appendingPathComponent("data").path, "-m", "immediate", "-w", "stop"])
        try? FileManager.default.removeItem(at: server.folder)
    }

    /// Whether the tests that need PostgreSQL run: always, unless `STATELOOP_POSTGRES_TESTS=0`
    /// (without the binaries they fail, saying how to install them).
    public static var testsEnabled: Bool {
        ProcessInfo.processInfo.environment["STATELOOP_POSTGRES_TESTS"] != "0"
    }

    /// Why a test that needs PostgreSQL cannot run here, or `nil` when it can.
    public static var missing: String? {
        isAvailable ? nil : "PostgreSQL is not installed (no \(binaries)/initdb): apt-get install postgresql, or set STATELOOP_PG_BIN"
    }

    /// The URL of a new, empty database on the shared server (``shared()``).
    public static func newDatabaseURL() async throws -> String {
        let server = try await shared()
        let database = try await server.createDatabase(newDatabaseName())
        return "postgres://\(server.user)@127.0.0.1:\(server.port)/\(database)"
    }

    /// A name for a new database, unique in this process.
    public static func newDatabaseName() -> String {
        databases.withLock { count in
            count += 1
            return "test\(count)"
        }
    }

    private static let databases = Mutex(0)

    /// Makes, starts and waits for a new cluster (about a second). With `tls`, it accepts TLS
    /// connections only, with a certificate signed by ``certificateAuthority`` (made by
    /// `openssl` in its folder).
    ///
    /// - Throws: ``SpawnFailure`` naming the step that failed and what it printed.
    public static func start(tls: Bool = false) async throws -> ThrowawayPostgres {
        try await offThePool {
            // The free port is found by binding and letting go of it, so another process may
            // take it before the server binds it (seen under load): a new port, a new try.
            var attempt = 1
            while true {
                do {
                    return try ThrowawayPostgres(tls: tls)
                } catch is PortTaken where attempt < 4 {
                    attempt += 1
                }
            }
        }
    }

    /// The port chosen was taken before the server could bind it.
    private struct PortTaken: Error {}

    private init(tls: Bool) throws {
        self.tls = tls
        folder = FileManager.default.temporaryDirectory.appendingPathComponent("stateloop-pg-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        port = try Self.freePort()
        if tls { try makeCertificates() }
        if getuid() == 0 {
            // The postgres user must own the folder (the temporary folder above it is open to all).
            try run("/bin/chown", ["-R", "postgres:postgres", folder.path], asPostgres: false)
        }
        let data = folder.appendingPathComponent("data").path
        try run(Self.binaries + "/initdb", ["-D", data, "--auth=trust", "-U", user, "-E", "UTF8", "--locale=C.UTF-8", "--no-sync"])
        if tls {
            // TCP connections with TLS only; written in place, so that the file keeps its owner.
            let rules = "local all all trust\nhostssl all all 127.0.0.0/8 trust\nhostssl all all ::1/128 trust\n"
            try rules.write(toFile: data + "/pg_hba.conf", atomically: false, encoding: .utf8)
        }
        do {
            try startServer()
        } catch {
            let log = (try? String(contentsOf: folder.appendingPathComponent("log"), encoding: .utf8)) ?? ""
            guard log.contains("Address already in use") else { throw error }
            try? FileManager.default.removeItem(at: folder)
            throw PortTaken()
        }
    }

    private func startServer() throws {
        var options =
            "-p \(port) -k \(folder.path) -c listen_addresses=127.0.0.1 -c fsync=off -c synchronous_commit=off "
            + "-c full_page_writes=off -c shared_buffers=16MB -c max_connections=500"
        if tls {
            // 127.0.0.2 too, which the certificate does not name: a client that checks names
            // refuses it there.
            options = options.replacingOccurrences(of: "listen_addresses=127.0.0.1", with: "listen_addresses=127.0.0.1,127.0.0.2")
            options += " -c ssl=on -c ssl_cert_file=\(folder.path)/server.crt -c ssl_key_file=\(folder.path)/server.key"
        }
        let data = folder.appendingPathComponent("data").path
        try run(Self.binaries + "/pg_ctl", ["-D", data, "-l", folder.appendingPathComponent("log").path, "-w", "-o", options, "start"])
    }

    /// Stops the server (fast shutdown: every connection cut), keeping its data for
    /// ``resume()``. Not an immediate shutdown: the cluster runs without `fsync` and with
    /// asynchronous commits, for speed, so a crash would lose what it acknowledged.
    public func pause() async throws {
        try await Self.offThePool { [self] in
            try run(Self.binaries + "/pg_ctl", ["-D", folder.appendingPathComponent("data").path, "-m", "fast", "-w", "stop"])
        }
    }

    /// Starts the server again on the same port and data after ``pause()``.
    public func resume() async throws {
        try await Self.offThePool { [self] in try startServer() }
    }

    /// Stops the server, starts it again as a standby of no primary and promotes it, as a
    /// failover to a replica does: the cluster goes on with the same data on a new timeline.
    public func promoteAsStandby() async throws {
        try await pause()
        try await Self.offThePool { [self] in
            let data = folder.appendingPathComponent("data")
            try run("/usr/bin/touch", [data.appendingPathComponent("standby.signal").path])
            try startServer()
            try run(Self.binaries + "/pg_ctl", ["-D", data.path, "-w", "promote"])
        }
    }

    /// Creates the database `name` and returns its name.
    public func createDatabase(_ name: String) async throws -> String {
        try await Self.offThePool { [self] in
            try run(Self.binaries + "/createdb", ["-h", "127.0.0.1", "-p", "\(port)", "-U", user, name])
            return name
        }
    }

    /// Runs `sql` with `psql` in `database`, as the superuser (several statements run as one
    /// transaction).
    public func execute(_ sql: String, in database: String = "postgres") async throws {
        try await Self.offThePool { [self] in
            try run(Self.binaries + "/psql", ["-h", "127.0.0.1", "-p", "\(port)", "-U", user, "-d", database, "-v", "ON_ERROR_STOP=1", "-c", sql])
        }
    }

    /// Dumps `database` with `pg_dump` (plain SQL, as an operator's nightly backup would) into
    /// a file in the server's folder; returns the file's path. A `clean` dump drops each
    /// object before it creates it again, to be replayed over the database it came from.
    public func dump(_ database: String, clean: Bool = false) async throws -> String {
        let file = folder.appendingPathComponent("dump-\(UUID().uuidString).sql").path
        try await Self.offThePool { [self] in
            try run(
                Self.binaries + "/pg_dump",
                ["-h", "127.0.0.1", "-p", "\(port)", "-U", user, "-f", file]
                    + (clean ? ["--clean", "--if-exists"] : []) + [database])
        }
        return file
    }

    /// Replays the dump at `file` into `database` with `psql`, stopping at the first error.
    public func load(_ file: String, into database: String) async throws {
        try await Self.offThePool { [self] in
            try run(
                Self.binaries + "/psql", ["-h", "127.0.0.1", "-p", "\(port)", "-U", user, "-d", database, "-v", "ON_ERROR_STOP=1", "-q", "-f", file])
        }
    }

    /// Stops the server at once (fast shutdown) and deletes its folder.
    public func stop() async {
        _ = try? await Self.offThePool { [self] in
            try? run(Self.binaries + "/pg_ctl", ["-D", folder.appendingPathComponent("data").path, "-m", "fast", "-w", "stop"])
            try? FileManager.default.removeItem(at: folder)
        }
    }

    /// A CA, a server certificate it signs for `localhost` and `127.0.0.1`, and another CA.
    private func makeCertificates() throws {
        let path = folder.path
        let openssl = "/usr/bin/openssl"
        for name in ["ca", "other-ca"] {
            try run(
                openssl,
                [
                    "req", "-x509", "-newkey", "rsa:2048", "-nodes", "-days", "2", "-subj", "/CN=StateLoop test \(name)",
                    "-keyout", "\(path)/\(name).key", "-out", "\(path)/\(name).pem",
                ], asPostgres: false)
        }
        try run(
            openssl,
            ["req", "-newkey", "rsa:2048", "-nodes", "-subj", "/CN=localhost", "-keyout", "\(path)/server.key", "-out", "\(path)/server.csr"],
            asPostgres: false)
        try "subjectAltName=DNS:localhost,IP:127.0.0.1\n".write(toFile: "\(path)/server.ext", atomically: true, encoding: .utf8)
        try run(
            openssl,
            [
                "x509", "-req", "-in", "\(path)/server.csr", "-CA", "\(path)/ca.pem", "-CAkey", "\(path)/ca.key", "-CAcreateserial",
                "-days", "2", "-extfile", "\(path)/server.ext", "-out", "\(path)/server.crt",
            ], asPostgres: false)
        // PostgreSQL refuses a key that others can read.
        try FileManager.default.setAttributes([.posixPermissions: 0o600], ofItemAtPath: "\(path)/server.key")
    }

    /// Runs `tool` with `arguments` (as the postgres user when this process is root) and waits;
    /// throws with what it printed if it fails.
    private func run(_ tool: String, _ arguments: [String], asPostgres: Bool = true) throws {
        let command = asPostgres && getuid() == 0 ? ["/usr/sbin/runuser", "-u", "postgres", "--", tool] + arguments : [tool] + arguments
        let output = folder.appendingPathComponent("command-output-\(UUID().uuidString)").path
        defer { try? FileManager.default.removeItem(atPath: output) }
        let status = try spawnAndWait(command, output: output, includingErrors: true)
        guard status == 0 else {
            let printed = (try? String(contentsOfFile: output, encoding: .utf8)) ?? ""
            throw SpawnFailure(description: "\(command.joined(separator: " ")) failed (\(status)): \(printed)")
        }
    }

    /// `work`, run on a thread of its own.
    private static func offThePool<Value: Sendable>(_ work: @escaping @Sendable () throws -> Value) async throws -> Value {
        try await withCheckedThrowingContinuation { continuation in
            Thread.detachNewThread { continuation.resume(with: Result { try work() }) }
        }
    }

    /// A port nothing listens on now: bound to port 0 on loopback, read, released.
    private static func freePort() throws -> Int {
        let socket = Foundation.socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        guard socket >= 0 else { throw SpawnFailure(description: "socket: \(String(cString: strerror(errno)))") }
        defer { close(socket) }
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        address.sin_port = 0
        var length = socklen_t(MemoryLayout<sockaddr_in>.size)
        let bound = withUnsafeMutablePointer(to: &address) { pointer in
            pointer.withMemoryRebound(to: sockaddr.self, capacity: 1) { bind(socket, $0, length) == 0 && getsockname(socket, $0, &length) == 0 }
        }
        guard bound else { throw SpawnFailure(description: "bind: \(String(cString: strerror(errno)))") }
        return Int(UInt16(bigEndian: address.sin_port))
    }
}
