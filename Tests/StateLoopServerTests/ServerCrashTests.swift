import Foundation
import Logging
import StateLoopServer
import StateLoopSync
import StateLoopSyncTransports
import Synchronization
import TestSupport
import Testing

#if canImport(Glibc)
    import Glibc
#endif

/// The kit's durability under a real crash: a server process on a SQLite file, killed with
/// SIGKILL at random points while StateLoopSync clients mutate through it.
@Suite("Sync server: crash", .timeLimit(.minutes(6)))
struct ServerCrashTests {
    typealias AddNote = ClientEndToEndTests.AddNote

    /// What the clients had acknowledged: each mutation's note, and the newest version a
    /// receipt named, per user.
    final class Ledger: Sendable {
        private let state = Mutex<(notes: [String: Set<String>], versions: [String: Version])>(([:], [:]))

        func acknowledge(_ note: String, at version: Version, for user: String) {
            state.withLock { state in
                state.notes[user, default: []].insert(note)
                state.versions[user] = max(state.versions[user] ?? version, version)
            }
        }

        var snapshot: (notes: [String: Set<String>], versions: [String: Version]) { state.withLock { $0 } }
    }

    @Test("50 SIGKILLs while clients mutate: nothing acknowledged lost, no version back, nothing applied twice, clients converge")
    func killedWhileClientsMutate() async throws {
        let kills = Int(ProcessInfo.processInfo.environment["STATELOOP_SERVER_KILLS"] ?? "50") ?? 50
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("stateloop-crash-\(UUID())")
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: folder) }
        let path = folder.appendingPathComponent("server.sqlite").path
        let port = try freeLoopbackPort()
        var child = try ChildProcess("sync-server-crash-child", [path, "\(port)"])
        let epoch = try Self.waitListening(child)
        let client = TestClient(port: port)

        let users = ["u1", "u2", "u3", "u4"]
        let ledger = Ledger()
        let clients = users.map { user in Self.client(port: port, user: user, ledger: ledger) }
        let made = Mutex<[String: [String]]>([:])
        let writing = Task {
            var sequence = 0
            while !Task.isCancelled {
                sequence += 1
                for (user, (_, notes)) in zip(users, clients) {
                    let note = "\(user)-\(sequence)"
                    made.withLock { $0[user, default: []].append(note) }
                    notes.mutate(AddNote(text: note))
                }
                try? await Task.sleep(for: .milliseconds(15))
            }
        }

        var random = SplitMix64(seed: 20_261_125)
        for round in 1...kills {
            try await Task.sleep(for: .milliseconds(30 + Int(random.next() % 120)))
            let acknowledged = ledger.snapshot
            _ = child.kill()
            child = try ChildProcess("sync-server-crash-child", [path, "\(port)"])
            #expect(try Self.waitListening(child) == epoch, "a plain restart keeps the epoch (round \(round))")
            for user in users {
                let (status, body) = try await Self.read(user, from: client, child: child)
                guard status == 200 else {
                    #expect(acknowledged.notes[user] == nil, "round \(round): \(user) has no notes after the restart")
                    continue
                }
                let value = try JSONDecoder().decode(Versioned<[String]>.self, from: body)
                #expect(value.version.epoch == epoch)
                #expect(value.version >= acknowledged.versions[user] ?? value.version, "round \(round): \(user)'s version went back")
                #expect(Set(value.value).count == value.value.count, "round \(round): a note of \(user) applied twice")
                let missing = (acknowledged.notes[user] ?? []).subtracting(value.value)
                #expect(missing.isEmpty, "round \(round): acknowledged but lost: \(missing.sorted())")
            }
        }
        writing.cancel()
        _ = await writing.value

        // Faults over: every client's queue drains by itself, and each shows the server's truth.
        // (The statuses stream does not replay: a settled resource is read through `value`.)
        let converged = await eventually(within: .seconds(60)) {
            for (user, (_, notes)) in zip(users, clients) {
                let expected = made.withLock { $0[user] ?? [] }
                guard let truth = try? await client.send("GET", "me/notes", as: user),
                    let value = try? JSONDecoder().decode(Versioned<[String]>.self, from: truth.body),
                    value.value.count == expected.count, notes.value == value.value
                else { return false }
            }
            return true
        }
        #expect(converged, "clients did not converge after the last restart")
        for user in users {
            let (_, body) = try await client.send("GET", "me/notes", as: user)
            let stored = try JSONDecoder().decode(Versioned<[String]>.self, from: body).value
            let expected = made.withLock { $0[user] ?? [] }
            #expect(stored == expected, "\(user): every note once, in the order made")
        }
        for (remote, notes) in clients {
            notes.stop()
            remote.stop()
        }
        _ = child.kill()
    }

    /// A notes client of `user` that retries through restarts and records what was acknowledged.
    static func client(port: Int, user: String, ledger: Ledger) -> (RemoteResource<[String]>, OptimisticResource<AddNote>) {
        var policy = ResourcePolicy()
        policy.maxRetries = 100_000
        policy.initialBackoff = .milliseconds(10)
        policy.maxBackoff = .milliseconds(100)
        policy.requestTimeout = .seconds(3)
        policy.reconnectSettle = .milliseconds(20)
        let clientID = ClientID()
        let headers = ["Authorization": "Bearer t-\(user)", "Client-ID": clientID.rawValue]
        let base = "127.0.0.1:\(port)/me/notes"
        let remote = RemoteResource(
            sources: ResourceSources(
                pull: HTTPPull<[String]>(url: URL(string: "http://\(base)")!, headers: headers),
                push: WebSocketPush<[String]>(
                    url: "ws://\(base)/push", headers: headers, initialBackoff: .milliseconds(20), maxBackoff: .milliseconds(200),
                    // Connections lost to the kills are the test's point, not warnings to read.
                    logger: Logger(label: "crash-test.push") { _ in SwiftLogNoOpLogHandler() }
                )
            ),
            policy: policy
        )
        let sender = HTTPMutationSender<AddNote>(url: URL(string: "http://\(base)")!, headers: headers)
        let notes = OptimisticResource(resource: remote, clientID: clientID, policy: policy) { mutation, id in
            let version = try await sender(mutation, id)
            ledger.acknowledge(mutation.text, at: version, for: user)
            return version
        }
        return (remote, notes)
    }

    /// `GET me/notes` as `user`, again after a transport error: the first request may go out on
    /// a pooled connection to the killed process.
    /// `user`'s notes from the restarted child, retried while its connections are refused or
    /// reset for up to 10 s (times ``hangGuardScale``): a loaded machine may take a moment to
    /// serve the first request. Past that, fails saying whether the child still runs and what it
    /// wrote on standard error.
    static func read(_ user: String, from client: TestClient, child: ChildProcess) async throws -> (status: Int, body: Data) {
        let deadline = ContinuousClock.now + .seconds(10) * hangGuardScale
        var lastError: (any Error)?
        while ContinuousClock.now < deadline {
            do {
                return try await client.send("GET", "me/notes", as: user)
            } catch {
                lastError = error
                try await Task.sleep(for: .milliseconds(50))
            }
        }
        let ended = child.kill()
        throw ChildFailed(
            description:
                "the restarted child did not answer for 10 s (\(String(describing: lastError))); it had \(ended.signal == nil ? "exited with \(ended.status)" : "to be killed"), standard error: \(ended.stderr)"
        )
    }

    /// Reads the child's first line; returns the epoch it serves.
    static func waitListening(_ child: ChildProcess) throws -> UInt64 {
        guard let line = child.readLine(), line.hasPrefix("listening "), let epoch = line.split(separator: " ").last.flatMap({ UInt64($0) }) else {
            let ended = child.kill()
            throw ChildFailed(description: "no 'listening' line: \(ended.stdout) \(ended.stderr)")
        }
        return epoch
    }

    struct ChildFailed: Error, CustomStringConvertible {
        let description: String
    }
}

/// A loopback port free now (the system picks it), for a server process that binds it again
/// after each restart.
func freeLoopbackPort() throws -> Int {
    let descriptor = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
    defer { close(descriptor) }
    var address = sockaddr_in()
    address.sin_family = sa_family_t(AF_INET)
    address.sin_port = 0
    address.sin_addr.s_addr = inet_addr("127.0.0.1")
    var length = socklen_t(MemoryLayout<sockaddr_in>.size)
    let bound = withUnsafeMutablePointer(to: &address) {
        $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { pointer in
            bind(descriptor, pointer, length) == 0 && getsockname(descriptor, pointer, &length) == 0
        }
    }
    guard bound else { throw ServerCrashTests.ChildFailed(description: "no free port: \(errno)") }
    return Int(UInt16(bigEndian: address.sin_port))
}
