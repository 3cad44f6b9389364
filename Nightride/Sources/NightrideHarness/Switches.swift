import Synchronization

/// What a harness switches and counts, under one lock, shared by its middleware, its push faults
/// and the harness itself: the fault plan and whether it applies, whether the network is cut,
/// and the traffic counters.
final class Switches: Sendable {
    private let state: Mutex<State>
    /// Sleeps on the server's clock: fault-plan latencies and socket leases follow it.
    let sleep: @Sendable (Duration) async throws -> Void

    init(faultPlan: FaultPlan?, faultsEnabled: Bool, sleep: @escaping @Sendable (Duration) async throws -> Void) {
        state = Mutex(State(faultPlan: faultPlan, faultsEnabled: faultsEnabled))
        self.sleep = sleep
    }

    struct State: Sendable {
        var faultPlan: FaultPlan?
        var faultsEnabled: Bool
        /// While set, every request is refused and every socket closed.
        var isNetworkCut = false
        var stats = ServerStats()

        /// The fault plan if it applies now.
        var activeFaults: FaultPlan? {
            faultsEnabled ? faultPlan : nil
        }

        /// Counts a request of `route`; returns its number (from 1), which fault decisions use.
        mutating func countRequest(_ route: String) -> Int {
            stats.requests[route, default: 0] += 1
            return stats.requests[route]!
        }
    }

    func withLock<Result: Sendable>(_ body: (inout State) -> Result) -> Result {
        state.withLock { body(&$0) }
    }

    /// The fault plan if it applies now.
    var activeFaults: FaultPlan? {
        withLock { $0.activeFaults }
    }

    /// Counts with `change`.
    func count(_ change: (inout ServerStats) -> Void) {
        state.withLock { change(&$0.stats) }
    }
}
