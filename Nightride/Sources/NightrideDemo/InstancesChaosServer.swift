import Foundation
import Logging
import NightrideHarness

/// A chaos run's server as several instances in the run's process, on one PostgreSQL database:
/// each scenario's passenger talks to one instance and its driver to the next, so every ride
/// and every push crosses instances. Faults, cuts and revocations go to every instance; the
/// truth is the first instance's, whose change log follows every instance's commits through
/// the database's change feed. A restart stops and starts one instance at a time, in turn, as
/// a rolling deploy would; a shared database has no new epoch to start.
@MainActor
final class InstancesChaosServer: ChaosServer {
    private let servers: [ServerHarness]
    let urls: [URL]
    private var restarts = 0

    /// Starts `instances` servers on the database at `postgresURL`.
    init(postgresURL: String, instances: Int, seed: UInt64, logger: Logger) async throws {
        servers = (0..<max(1, instances)).map { index in
            ServerHarness(
                configuration: .init(
                    postgresURL: postgresURL, port: 0, inactivityTimeout: .seconds(3), loginLimits: .scriptedClients, passwordCost: 4
                ),
                faults: .chaos(seed: seed &+ UInt64(index)),
                logger: logger
            )
        }
        var urls: [URL] = []
        for server in servers {
            urls.append(URL(string: "http://127.0.0.1:\(try await server.server.start())")!)
        }
        self.urls = urls
    }

    var url: URL { urls[0] }

    var now: Duration { servers[0].now }

    /// Every command to every instance, but `retire` (server-side moves, made once) to the
    /// first; `stats` adds the instances' counts up.
    func control(_ command: String) async -> String {
        if command.hasPrefix("retire") { return await servers[0].control(command) }
        var answers: [String] = []
        for server in servers {
            answers.append(await server.control(command))
        }
        guard command == "stats" else { return answers.first { $0 != "ok" } ?? "ok" }
        let totals = answers.map { answer in answer.split(separator: " ").compactMap { Int($0) } }
        let sockets = totals.map { $0.first ?? 0 }.reduce(0, +)
        let requests = totals.map { $0.last ?? 0 }.reduce(0, +)
        return "ok sockets \(sockets) requests \(requests) on \(servers.count) instances"
    }

    func truth() async throws -> ServerTruth {
        try await servers[0].truth()
    }

    func restart(newEpoch: Bool, down: Duration) async throws {
        let index = restarts % servers.count
        restarts += 1
        try await servers[index].server.restart(down: down)
    }

    func stop() async {
        for server in servers {
            await server.server.stop()
        }
    }
}
