import Foundation
import Logging
import NightrideHarness

/// The server a chaos run plays against, driven the same way wherever it runs: by control
/// commands (``NightrideHarness/ServerHarness/control(_:)``), a restart, and the truth of its store.
@MainActor
protocol ChaosServer: AnyObject {
    /// Where clients reach it.
    var url: URL { get }
    /// Where each of a scenario's clients reaches it, in turn (several instances of one
    /// backend); `[url]` for a single server.
    var urls: [URL] { get }
    /// The time screens are logged at: the basis of the truth's change times.
    var now: Duration { get }
    /// Runs a control command; returns its answer.
    func control(_ command: String) async -> String
    /// What the server's store holds now.
    func truth() async throws -> ServerTruth
    /// Stops the server and starts it again on the same port and data, `down` later (an
    /// outage), with a new epoch first when `newEpoch` (as after a restore).
    func restart(newEpoch: Bool, down: Duration) async throws
    /// Stops it for good.
    func stop() async
}

extension ChaosServer {
    var urls: [URL] { [url] }
}

/// A chaos run's server in the run's own process: restarts stop and start it on its data file.
@MainActor
final class InProcessChaosServer: ChaosServer {
    private let harness: ServerHarness
    let url: URL

    init(dataPath: String, seed: UInt64, logger: Logger) async throws {
        harness = ServerHarness(
            configuration: .init(
                dataPath: dataPath, durability: .processCrash, port: 0, inactivityTimeout: .seconds(3),
                loginLimits: .scriptedClients, passwordCost: 4
            ),
            faults: .chaos(seed: seed),
            logger: logger
        )
        url = URL(string: "http://127.0.0.1:\(try await harness.server.start())")!
    }

    var now: Duration { harness.now }

    func control(_ command: String) async -> String {
        await harness.control(command)
    }

    func truth() async throws -> ServerTruth {
        try await harness.truth()
    }

    func restart(newEpoch: Bool, down: Duration) async throws {
        try await harness.server.restart(newEpoch: newEpoch, down: down)
    }

    func stop() async {
        await harness.server.stop()
    }
}
