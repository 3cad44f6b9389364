import NightrideModel
import NightrideServer

/// The switches a chaos run pulls on a server, by name, so that a server in a process of its own
/// (`nightride server --control`, one command per line on its standard input) can be driven as
/// one in the same process is.
extension ServerHarness {
    /// Runs one control command and returns its one-line answer, `ok …` or `error: …`:
    ///
    /// - `faults on` / `faults off`: ``faultsEnabled``;
    /// - `cut on` / `cut off`: ``isNetworkCut``;
    /// - `revoke` (every session) or `revoke NAME…`: ``NightrideServer/revokeSessions(of:)``;
    /// - `retire NAME…`: ``retire(_:)``;
    /// - `stats`: `ok sockets N requests M`.
    public func control(_ line: String) async -> String {
        let words = line.split(separator: " ").map(String.init)
        guard let command = words.first else { return "error: empty command" }
        let arguments = Array(words.dropFirst())
        do {
            switch (command, arguments) {
            case ("faults", ["on"]), ("faults", ["off"]):
                faultsEnabled = arguments == ["on"]
            case ("cut", ["on"]), ("cut", ["off"]):
                isNetworkCut = arguments == ["on"]
            case ("revoke", []):
                try await server.revokeSessions()
            case ("revoke", _):
                for user in arguments { try await server.revokeSessions(of: user) }
            case ("retire", _):
                await retire(arguments)
            case ("stats", []):
                let stats = stats
                return "ok sockets \(stats.openSockets) requests \(stats.requests.values.reduce(0, +))"
            default:
                return "error: unknown command \(line)"
            }
            return "ok"
        } catch {
            return "error: \(error)"
        }
    }

    /// Ends the rides of `users` and takes them off duty, as users closing the app for the night
    /// would: a chaos run retires each batch's users, so that later batches do not inherit a
    /// queue of rides nobody takes. Moves that do not fit the ride's state are skipped.
    public func retire(_ users: [String]) async {
        for action in [RideAction.cancel, .arrive, .finish, .finishSurvey] {
            for user in users {
                try? await server.perform(action, for: user)
            }
        }
        for user in users {
            try? await server.setDriverMode(false, for: user)
        }
    }
}

extension FaultPlan {
    /// The chaos run's trouble: up to 200 ms of latency, a quarter of pushes lost, sockets cut
    /// every 0.5 to 3 s, 5% of requests failed, a tenth of mutation answers lost, a fifth of
    /// pushes followed by a hint.
    public static func chaos(seed: UInt64) -> FaultPlan {
        FaultPlan(
            seed: seed,
            latency: .milliseconds(1)...(.milliseconds(200)),
            pushDropProbability: 0.25,
            disconnectAfter: .milliseconds(500)...(.seconds(3)),
            failureProbability: 0.05,
            lostAnswerProbability: 0.1,
            hintProbability: 0.2
        )
    }
}
