import NightrideServer
import StateLoopServer

/// The change log and the mutation audit, as read from a store's change feed and its clients'
/// progress, with how far the feed was read. Each read starts ``overlap`` positions back, and an
/// entry read twice is logged once.
struct ServerHistory: Sendable {
    var changeLog = ChangeLog()
    var audit = MutationAudit()
    /// How far the feed being read was read: its highest position recorded.
    var feedPosition: UInt64 = 0
    /// The positions recorded within the last ``overlap`` before ``feedPosition``: read again,
    /// they are skipped, so an entry is logged once.
    private var recent: Set<UInt64> = []

    /// How far back each read starts. On PostgreSQL a position is taken as a transaction writes
    /// its entry, and several write at once: one holding a lower position can commit after a
    /// higher one was read. A reader that went on from the highest position read would miss it
    /// for good, and a version a client showed would be one "the server never had".
    static let overlap: UInt64 = 1_000

    /// Where the next read starts.
    var readFrom: UInt64 {
        feedPosition > Self.overlap ? feedPosition - Self.overlap : 0
    }

    /// Starts on a new feed, from its beginning.
    mutating func startFeed() {
        feedPosition = 0
        recent = []
    }

    /// Adds entries read from the feed, those not recorded yet; feed times become times since
    /// `origin` (a time since 1970).
    mutating func record(_ entries: [StoredChange], origin: Duration) {
        let floor = readFrom
        for entry in entries where entry.sequence > floor && recent.insert(entry.sequence).inserted {
            feedPosition = max(feedPosition, entry.sequence)
            // Every entry of a commit names it: the audit counts commits, not entries.
            if let cause = entry.cause { audit.noteApplied(cause, commit: entry.commit, epoch: entry.value.version.epoch) }
            if let record = ChangeRecord(entry.value, at: WallTime.of(entry.time) - origin) { changeLog.append(record) }
        }
        if recent.count > 4 * Int(Self.overlap) {
            let kept = readFrom
            recent = recent.filter { $0 > kept }
        }
    }
}
