import NightrideServer
import StateLoopServer

/// The change log and the mutation audit, as read from a store's change feed and its clients'
/// progress, with how far the feed was read. Entries at or before ``feedPosition`` are skipped,
/// so an entry read twice is logged once.
struct ServerHistory: Sendable {
    var changeLog = ChangeLog()
    var audit = MutationAudit()
    /// How far the feed being read was read.
    var feedPosition: UInt64 = 0

    /// Adds entries read from the feed; feed times become times since `origin` (a time since
    /// 1970).
    mutating func record(_ entries: [StoredChange], origin: Duration) {
        for entry in entries where entry.sequence > feedPosition {
            feedPosition = entry.sequence
            // Every entry of a commit names it: the audit counts commits, not entries.
            if let cause = entry.cause { audit.noteApplied(cause, commit: entry.commit, epoch: entry.value.version.epoch) }
            if let record = ChangeRecord(entry.value, at: WallTime.of(entry.time) - origin) { changeLog.append(record) }
        }
    }
}
