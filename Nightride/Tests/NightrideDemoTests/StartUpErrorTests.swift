import Foundation
import Logging
import NightrideServer
import TestSupport
import Testing

#if canImport(FoundationNetworking)
    import FoundationNetworking
#endif

/// What `nightride server` says when it cannot start: it exits non-zero at once, naming what is
/// wrong and how to fix it, rather than hanging or printing a system call's error.
@Suite("nightride server: start-up errors", .timeLimit(.minutes(3)))
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

    @Test("a PostgreSQL database or role that does not exist: exit 1 at once, naming what to create and the command that does")
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
        let child = try ChildProcess("nightride", ["server", "--memory", "--port", "0", "--log-format", "json", "--log-level", "info"])
        let banner = try #require(child.readLine(), "no banner")
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

    /// Runs `nightride server` with `arguments` to its end; a server that starts after all is
    /// killed past the hang guard, and fails the check of its status.
    private static func serve(_ arguments: [String]) async throws -> ChildProcess.Ended {
        let child = try ChildProcess("nightride", ["server"] + arguments)
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
