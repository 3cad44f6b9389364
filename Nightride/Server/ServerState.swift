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
    var changeLog = ChangeLog()
    var audit = MutationAudit()
    /// How far the change log has read the store's change feed.
    var feedPosition: UInt64 = 0

    init(faultPlan: FaultPlan?, faultsEnabled: Bool) {
        self.faultPlan = faultPlan
        self.faultsEnabled = faultsEnabled
    }

    var activeFaults: FaultPlan? {
        faultsEnabled ? faultPlan : nil
    }

    /// Adds a commit's changes to the change log and the audit at `time`, unless the feed was
    /// read past them already.
    mutating func record(_ changes: CommittedChanges, at time: Duration, epoch: UInt64) {
        for client in changes.progress { audit.noteProgress(client) }
        guard let feed = changes.feed, feed.upperBound > feedPosition else { return }
        feedPosition = feed.upperBound
        if let cause = changes.cause { audit.noteApplied(cause, commit: feed.lowerBound, epoch: epoch) }
        for value in changes.values {
            if let record = ChangeRecord(value, at: time) { changeLog.append(record) }
        }
    }

    /// Counts a request of `route`; returns its number (from 1), which fault decisions use.
    mutating func countRequest(_ route: String) -> Int {
        stats.requests[route, default: 0] += 1
        return stats.requests[route]!
    }
}
