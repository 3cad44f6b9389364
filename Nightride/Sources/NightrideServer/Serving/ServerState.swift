import NightrideModel
import StateLoopServer
import StateLoopWire

/// What the server keeps beside its store, under one lock: the fault plan and its switches, the
/// traffic counters, and the change log and mutation audit read from the store's change feed
/// (a copy that outlives a store in memory, as an external log would).
struct ServerState: Sendable {
    var faultPlan: FaultPlan?
    var faultsEnabled: Bool
    /// While set, the network is "cut": every request is refused and every socket closed.
    var isNetworkCut = false
    /// Cleared while the server stops: a socket whose upgrade is under way is refused.
    var acceptsSockets = true
    var stats = ServerStats()
    var history = ServerHistory()
    /// Commits heard while the change log catches up on a shared database's feed, recorded
    /// after it (in order, each once): `nil` when not catching up.
    var heldCommits: [(changes: CommittedChanges, time: Duration, epoch: UInt64)]?

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
