import Foundation
import StateLoopServer
import StateLoopWire

/// A page of the change feed as a catch-up reads it, turned back into the commits the store's
/// observers get: a pure function of the rows, apart from the database that reads them.
struct FeedPage {
    /// One row of the catch-up's query: a value written (`value` set) or a client's progress
    /// (`progress` set), with its commit's position, time and cause.
    struct Row {
        /// The value's own position, or the commit's for a progress row.
        var position: UInt64
        var commit: UInt64
        var time: Date
        var cause: ChangeCause?
        var value: StoredValue?
        /// For a row's write: its fields before and after, as the feed keeps them.
        var rowFields: String? = nil
        var progress: ClientProgress?
    }

    /// The page's rows, in the order of their commits, each commit's values in position order.
    var rows: [Row]
    /// Whether the query stopped at its limit: the last commit may then be cut off.
    var isFull: Bool

    /// What a page holds.
    enum Reading {
        /// Complete commits, in order, and the position to read after next.
        case commits([CommittedChanges], through: UInt64)
        /// No commit after the position read from.
        case nothing
        /// One commit with more rows than the page: read again with a higher limit.
        case needsLargerPage
    }

    /// The complete commits of the page. A full page's last commit may have rows beyond it,
    /// so it is left for the next read, unless it is the only commit on the page.
    var reading: Reading {
        var groups: [[Row]] = []
        for row in rows {
            if let last = groups.last?.last, last.commit == row.commit {
                groups[groups.count - 1].append(row)
            } else {
                groups.append([row])
            }
        }
        if isFull {
            guard groups.count > 1 else { return .needsLargerPage }
            groups.removeLast()
        }
        guard let through = groups.last.flatMap({ $0.map(\.position).max() }) else { return .nothing }
        return .commits(groups.map(Self.changes(of:)), through: through)
    }

    /// One commit's rows as its observers get them: each key once, at its newest value, in the
    /// order the keys were first written.
    private static func changes(of commit: [Row]) -> CommittedChanges {
        var changes = TransactionChanges()
        for row in commit {
            if let value = row.value {
                if let text = row.rowFields {
                    // A row's entry whose fields cannot be read is no value either.
                    if let fields = try? RowSQL.FeedFields(text: text) {
                        changes.wroteRow(
                            RowChange(
                                position: row.position, key: value.key, version: value.version, json: fields.after == nil ? nil : value.json,
                                before: fields.before, after: fields.after))
                    }
                } else {
                    changes.wrote(value)
                }
            }
            if let progress = row.progress { changes.progressed(progress) }
        }
        let first = commit[0]
        let positions = commit.filter { $0.value != nil }.map(\.position)
        if let low = positions.min(), let high = positions.max() {
            _ = changes.fed(at: Int64(low), time: first.time)
            _ = changes.fed(at: Int64(high), time: first.time)
        }
        return changes.committed(cause: first.cause, now: { first.time })
    }
}
