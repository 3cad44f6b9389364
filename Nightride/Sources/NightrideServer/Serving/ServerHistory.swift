import Foundation
import StateLoopServer
import Synchronization

/// The change log and the mutation audit, as read from a store's change feed and its clients'
/// progress, with how far the feed was read.
///
/// Fed two ways that may overlap: catching up on the feed (a store opened, or read from another
/// process) and commits as they happen. Entries at or before ``feedPosition`` are skipped, so a
/// change is logged once whichever way it came first.
struct ServerHistory: Sendable {
    var changeLog = ChangeLog()
    var audit = MutationAudit()
    /// How far the feed was read.
    var feedPosition: UInt64 = 0

    /// Adds a commit's changes at `time`, unless the feed was read past them already.
    mutating func record(_ changes: CommittedChanges, at time: Duration, epoch: UInt64) {
        for client in changes.progress { audit.noteProgress(client) }
        guard let feed = changes.feed, feed.upperBound > feedPosition else { return }
        feedPosition = feed.upperBound
        if let cause = changes.cause { audit.noteApplied(cause, commit: feed.lowerBound, epoch: epoch) }
        for value in changes.values {
            if let record = ChangeRecord(value, at: time) { changeLog.append(record) }
        }
    }

    /// Reads what `store`'s feed holds after ``feedPosition``, and every client's progress;
    /// feed times become times since `origin` (a time since 1970).
    mutating func catchUp(from store: SQLiteStore, origin: Duration) throws {
        while true {
            let entries = try store.changes(after: feedPosition, limit: 5_000)
            guard !entries.isEmpty else { break }
            record(entries, origin: origin)
        }
        for client in try store.clientProgress() { audit.noteProgress(client) }
    }

    /// Adds entries read from a store's feed; times become times since `origin`.
    mutating func record(_ entries: [StoredChange], origin: Duration) {
        for entry in entries {
            let changes = CommittedChanges(
                values: [entry.value], progress: [], time: entry.time, cause: entry.cause, feed: entry.commit...entry.sequence
            )
            record(changes, at: Self.wallTime(of: entry.time) - origin, epoch: entry.value.version.epoch)
        }
    }

    /// A date as a time since 1970, to the microsecond (the feed's precision).
    static func wallTime(of date: Date) -> Duration {
        .microseconds(Int64((date.timeIntervalSince1970 * 1_000_000).rounded()))
    }

    /// A time since 1970 as a date, to the microsecond.
    static func date(wallTime: Duration) -> Date {
        Date(timeIntervalSince1970: Double(wallTime / .microseconds(1)).rounded() / 1_000_000)
    }
}

/// What a Nightride server's data file holds, read from outside the server (another process):
/// the truth a chaos run checks its clients against while the server runs in a process of its
/// own, which may be killed and started again.
public final class StoreTruthReader: Sendable {
    private let store: SQLiteStore
    private let origin: Duration
    private let history = Mutex(ServerHistory())

    /// A reader of the file at `dataPath`; times are since `origin` (a time since 1970: see
    /// ``wallClockNow``), so that they compare with times taken the same way in this process.
    public init(dataPath: String, origin: Duration) throws {
        store = try SQLiteStore(path: dataPath)
        self.origin = origin
    }

    /// The truth as the file holds it now (read from where the last call stopped).
    public func truth() throws -> ServerTruth {
        try history.withLock { history in
            try history.catchUp(from: store, origin: origin)
            return ServerTruth(changeLog: history.changeLog, catalog: PlaceCatalog(), audit: history.audit)
        }
    }

    /// The wall clock as a time since 1970, the basis of every stored time.
    public static var wallClockNow: Duration {
        ServerHistory.wallTime(of: Date())
    }
}
