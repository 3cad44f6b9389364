import NightrideModel
import StateLoopWire

/// What the server keeps beside its store, under one lock: the fault plan and its switches, the
/// traffic counters, the log of every change and the audit of processed mutations. The log and
/// the audit outlive a restart, as an external log would.
struct ServerState: Sendable {
    var faultPlan: FaultPlan?
    var faultsEnabled: Bool
    /// While set, the network is "cut": every request is refused and every socket closed.
    var isNetworkCut = false
    /// Cleared while the server stops: a socket whose upgrade is under way is refused.
    var acceptsSockets = true
    var stats = ServerStats()
    var changeLog = ChangeLog()
    var processedMutations: [ProcessedMutation] = []

    init(faultPlan: FaultPlan?, faultsEnabled: Bool) {
        self.faultPlan = faultPlan
        self.faultsEnabled = faultsEnabled
    }

    var activeFaults: FaultPlan? {
        faultsEnabled ? faultPlan : nil
    }

    /// Counts a request of `route`; returns its number (from 1), which fault decisions use.
    mutating func countRequest(_ route: String) -> Int {
        stats.requests[route, default: 0] += 1
        return stats.requests[route]!
    }
}
