import Foundation
import Logging
import NightrideServer
import TestSupport
import Testing

#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

#if canImport(FoundationNetworking)
    import FoundationNetworking
#endif

/// What `nightride server` says when it cannot start: it exits non-zero at once, naming what is
/// wrong and how to fix it, rather than hanging or printing a system call's error.
@Suite("nightride server: start-up errors", .timeLimit(.minutes(6)))
struct StartUpErrorTests {
    @Test("a port in use: exit 1, saying so and naming --port")
    func portInUse() async throws {
        var quiet = Logger(label: "holder")
        quiet.logLevel = .critical
        let holder = NightrideServer(configuration: .init(port: 0), logger: quiet)
        let port = try await holder.start()
        defer { Task { await holder.stop() } }
        let ended = try await Self.serve(["--memory", "--port", "\(port)"])
        #expect(ended.status == 1)
        #expect(ended.stderr.contains("port \(port) on 127.0.0.1 is in use"), "\(ended.stderr)")
        #expect(ended.stderr.contains("start with another --port"), "\(ended.stderr)")
        #expect(!ended.stderr.contains("errno"), "\(ended.stderr)")
    }

    @Test(
        "a PostgreSQL database or role that does not exist: exit 1 at once, naming what to create and the command that does",
        .enabled(if: ThrowawayPostgres.testsEnabled, "STATELOOP_POSTGRES_TESTS=0"))
    func postgresMissing() async throws {
        guard let url = try await newPostgresDatabase() else { return }
        let server = try #require(URLComponents(string: url))
        let (host, port, user) = (try #require(server.host), try #require(server.port), try #require(server.user))
        let cases: [(String, [String])] = [
            ("postgres://\(user)@\(host):\(port)/missingdb", ["the database \"missingdb\" does not exist", "createdb -h \(host) -p \(port)"]),
            ("postgres://ghost@\(host):\(port)/postgres", ["the role \"ghost\" does not exist", "createuser -h \(host) -p \(port)"]),
        ]
        for (database, parts) in cases {
            let started = ContinuousClock.now
            let ended = try await Self.serve(["--postgres", database, "--port", "0"])
            let waited = ContinuousClock.now - started
            print("nightride server --postgres \(database) exited \(ended.status) after \(waited)")
            #expect(ended.status == 1, "\(ended.stderr)")
            for part in parts {
                #expect(ended.stderr.contains(part), "\(ended.stderr)")
            }
        }
    }

    @Test("--log-format json --log-level info: every line on standard error is one JSON object, each answer with its request id")
    func jsonLogs() async throws {
        let child = try ChildProcess(
            "nightride", ["server", "--memory", "--port", "0", "--log-format", "json", "--log-level", "info"], removing: Self.settingVariables)
        let banner = try #require(await child.readLine(within: .seconds(60)), "no banner")
        let address = try #require(banner.firstRange(of: "http://127.0.0.1:").map { banner[$0.lowerBound...].prefix { $0 != "," } })
        let (_, response) = try await URLSession.shared.data(from: try #require(URL(string: "\(address)/health/live")))
        #expect((response as? HTTPURLResponse)?.statusCode == 200)
        // The answer's line is written as the answer leaves: give it a moment before the kill.
        try await Task.sleep(for: .milliseconds(300))
        let ended = child.kill()
        let lines = ended.stderr.split(separator: "\n").map(String.init)
        let objects = lines.compactMap { try? JSONSerialization.jsonObject(with: Data($0.utf8)) as? [String: Any] }
        #expect(objects.count == lines.count && !lines.isEmpty, "lines that are not JSON objects:\n\(ended.stderr)")
        let answered = objects.first { $0["route"] as? String == "GET /health/live" }
        #expect(answered?["status"] as? String == "200", "\(ended.stderr)")
        #expect((answered?["hb.request.id"] as? String)?.isEmpty == false, "\(ended.stderr)")
    }

    @Test("settings from the environment, then the --config file, a flag winning over both; bad settings, files and data files refused, saying which")
    func settings() async throws {
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("nightride-settings-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: folder) }
        let file = folder.appendingPathComponent("settings.json").path
        let notJSON = folder.appendingPathComponent("notes.txt").path
        try "port: 8080\n".write(toFile: notJSON, atomically: true, encoding: .utf8)

        // Ports free when chosen: the tests beside this one bind ports too, and one of them may
        // take a port between its choice and the server's bind. Then the server says the port
        // is in use, and the checks run again on other ports.
        for attempt in 1...5 {
            let (envPort, filePort) = (try Self.freePort(), try Self.freePort())
            try #"{"port": \#(filePort), "log": {"format": "json", "level": "info"}}"#.write(toFile: file, atomically: true, encoding: .utf8)
            // The environment's port; the file's port and log format, when the environment says
            // nothing of them; the environment over the file, a flag over both.
            let fromEnvironment = try await Self.listening(["--memory"], environment: ["PORT": "\(envPort)"])
            let fromFile = try await Self.listening(["--memory", "--config", file])
            let environmentOverFile = try await Self.listening(["--memory", "--config", file], environment: ["PORT": "\(envPort)"])
            let flagOverBoth = try await Self.listening(["--memory", "--config", file, "--port", "0"], environment: ["PORT": "\(envPort)"])
            let all = [fromEnvironment, fromFile, environmentOverFile, flagOverBoth]
            if attempt < 5, all.contains(where: { $0.port == nil && $0.stderr.contains("is in use") }) { continue }
            #expect(fromEnvironment.port == envPort, "\(fromEnvironment.stderr)")
            #expect(fromFile.port == filePort, "\(fromFile.stderr)")
            #expect(fromFile.stderr.split(separator: "\n").allSatisfy { $0.hasPrefix("{") }, "\(fromFile.stderr)")
            #expect(environmentOverFile.port == envPort, "\(environmentOverFile.stderr)")
            #expect(flagOverBoth.port != nil && flagOverBoth.port != envPort, "\(flagOverBoth.stderr)")
            break
        }

        #if PostgreSQL
            let passwordRefused = "give the URL in DATABASE_URL"
        #else
            // Refused before its password is looked at: this build has no PostgreSQL at all.
            let passwordRefused = "built without PostgreSQL support"
        #endif
        for (arguments, environment, says) in [
            (["--memory"], ["LOG_FORMAT": "xml"], "the log format is xml, not one of text, json"),
            (["--memory"], ["PORT": "eighty"], "the port is eighty, not a whole number"),
            (["--memory", "--config", folder.appendingPathComponent("missing.json").path], [:], "missing.json: no such file"),
            (["--memory", "--config", notJSON], [:], "is not a JSON object of settings"),
            (["--data", folder.appendingPathComponent("absent/server.sqlite").path, "--port", "0"], [:], "absent does not exist"),
            (["--data", notJSON, "--port", "0"], [:], "is not a SQLite database"),
            (["--postgres", "postgres://app:s3cret@127.0.0.1:5432/app"], [:], passwordRefused),
            (["--postgres", "postgres://app:p#ss/word@127.0.0.1:5432/app"], [:], passwordRefused),
            (["--restore", notJSON], ["DATABASE_URL": "postgres://app@127.0.0.1:1/app"], "--restore and --new-epoch are for a SQLite data file"),
        ] {
            let ended = try await Self.serve(arguments, environment: environment)
            #expect(ended.status != 0, "\(arguments) \(environment)")
            #expect(ended.stderr.contains(says), "\(ended.stderr)")
            #expect(!ended.stderr.contains("s3cret") && !ended.stderr.contains("p#ss"), "a password shown: \(ended.stderr)")
        }
    }

    @Test(
        "DATABASE_URL chooses the PostgreSQL database, and its errors are said as a flag's are",
        .enabled(if: ThrowawayPostgres.testsEnabled, "STATELOOP_POSTGRES_TESTS=0"))
    func databaseURLFromEnvironment() async throws {
        guard let url = try await newPostgresDatabase() else { return }
        let parts = try #require(URLComponents(string: url))
        let missing = "postgres://\(parts.user ?? "")@\(parts.host ?? ""):\(parts.port ?? 0)/absentdb"
        let ended = try await Self.serve(["--port", "0"], environment: ["DATABASE_URL": missing])
        #expect(ended.status == 1)
        #expect(ended.stderr.contains("the database \"absentdb\" does not exist"), "\(ended.stderr)")
    }

    /// Starts `nightride server` with `arguments`, reads the port its banner names (`nil`: it
    /// named none, its standard error says why), and kills it.
    private static func listening(_ arguments: [String], environment: [String: String] = [:]) async throws -> (port: Int?, stderr: String) {
        let child = try ChildProcess("nightride", ["server"] + arguments, environment: environment, removing: Self.settingVariables)
        let banner = await child.readLine(within: .seconds(60)) ?? ""
        let ended = child.kill()
        let port = banner.firstRange(of: "http://127.0.0.1:").flatMap { Int(banner[$0.upperBound...].prefix { $0.isNumber }) }
        return (port, ended.stderr)
    }

    /// The variables `nightride server` reads its settings from: unset in its children unless
    /// a test sets them, so that the environment the tests run in changes nothing.
    static let settingVariables = ["NIGHTRIDE_HOST", "PORT", "DATABASE_URL", "NIGHTRIDE_DATA", "LOG_LEVEL", "LOG_FORMAT"]

    /// A port nothing listens on now.
    private static func freePort() throws -> Int {
        let (descriptor, port) = try LoopbackSocket.boundWithoutListening()
        close(descriptor)
        return port
    }

    /// Runs `nightride server` with `arguments` to its end; a server that starts after all is
    /// killed past the hang guard, and fails the check of its status.
    private static func serve(_ arguments: [String], environment: [String: String] = [:]) async throws -> ChildProcess.Ended {
        let child = try ChildProcess("nightride", ["server"] + arguments, environment: environment, removing: Self.settingVariables)
        nonisolated(unsafe) let killed = child
        let guardTask = Task {
            try await Task.sleep(for: .seconds(60))
            killed.sendKill()
        }
        let ended = await child.ended()
        guardTask.cancel()
        return ended
    }
}
