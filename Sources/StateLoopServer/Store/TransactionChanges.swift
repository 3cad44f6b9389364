import Foundation
import StateLoopWire

/// What one store transaction changed, kept as it goes: each key's last value written, the
/// clients' progress, and the change feed's positions. Every store's transaction keeps one and
/// hands its ``committed(cause:now:)`` to the commit observers.
package struct TransactionChanges {
    private var written: [ResourceKey: StoredValue] = [:]
    private var order: [ResourceKey] = []
    private var progress: [ClientProgress] = []
    private var rows: [RowChange] = []
    /// The commit's time and the feed positions of its first and last entries, from its first
    /// write on.
    package private(set) var feed: (time: Date, commit: Int64, last: Int64)?

    package init() {}

    /// Notes a value written.
    package mutating func wrote(_ value: StoredValue) {
        if written[value.key] == nil { order.append(value.key) }
        written[value.key] = value
    }

    /// Notes a row written or deleted.
    package mutating func wroteRow(_ change: RowChange) {
        rows.append(change)
    }

    /// Notes a feed entry at `position`, written at `time`; returns whether it is the commit's
    /// first (its position then names the commit).
    package mutating func fed(at position: Int64, time: Date) -> Bool {
        if let current = feed {
            feed = (current.time, current.commit, position)
            return false
        }
        feed = (time, position, position)
        return true
    }

    /// Notes a client's progress, replacing what was noted of it before.
    package mutating func progressed(_ client: ClientProgress) {
        progress.removeAll { $0.scope == client.scope && $0.client == client.client }
        progress.append(client)
    }

    /// The changes as the observers get them.
    package func committed(cause: ChangeCause?, now: () -> Date) -> CommittedChanges {
        CommittedChanges(
            values: order.compactMap { written[$0] }, progress: progress, time: feed?.time ?? now(), cause: cause,
            feed: feed.map { UInt64($0.commit)...UInt64($0.last) }, rows: rows
        )
    }
}

/// How the stores write times: epochs in milliseconds, feed times in microseconds since 1970.
package enum StoreClock {
    /// Milliseconds since 1970: a new epoch is later than any earlier one, even one started in
    /// the same second.
    package static func millisecondsNow() -> UInt64 {
        UInt64(max(1, Date().timeIntervalSince1970 * 1_000))
    }

    /// A feed time as stored.
    package static func microseconds(_ date: Date) -> Int64 {
        Int64((date.timeIntervalSince1970 * 1_000_000).rounded())
    }

    /// A stored feed time.
    package static func date(microseconds: Int64) -> Date {
        Date(timeIntervalSince1970: Double(microseconds) / 1_000_000)
    }
}
