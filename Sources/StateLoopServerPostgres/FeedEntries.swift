import Foundation
import PostgresNIO
import StateLoopServer
import StateLoopWire

/// One commit's entries in the change feed, in as few statements as the parameter limit allows:
/// each value written
/// (`stateloop_changes`), each client's progress (`stateloop_progress`), and the notification
/// that tells every instance's ``FeedListener`` to read them.
///
/// The first value takes the commit's position (`commit`, allocated under the feed's lock);
/// the others take the positions after it. A commit that wrote no value (a refused mutation
/// that only moved its client on) still has a position: its progress rows carry it.
struct FeedEntries {
    /// The commit's position.
    let commit: Int64
    /// When it committed, in microseconds since 1970.
    let time: Int64
    let epoch: Int64
    let cause: ChangeCause?
    let values: [Entry]
    let progress: [ClientProgress]
    /// The payload of the notification the last statement sends (the committing instance, whose
    /// own listener skips it); `nil` for none.
    var notification: String?

    /// One entry: a value written, or a row's write with its fields before and after
    /// (``rowFields``; a deletion's value has empty bytes).
    struct Entry: Sendable {
        var value: StoredValue
        var rowFields: String? = nil
    }

    /// The channel the notifications go out on.
    static let channel = "stateloop_feed"

    /// How many values one statement inserts at most: five parameters each, and PostgreSQL
    /// takes at most 65,535 parameters in one statement.
    static let valuesPerStatement = 10_000

    /// The statements, run in order in the commit's transaction: the values in batches of
    /// ``valuesPerStatement`` (the first value at the commit's position, the next ones at the
    /// positions after it, which no other transaction takes while this one holds the feed's
    /// lock), the progress with the first, the notification with the last. Each statement's one
    /// row holds the position of its last value (`NULL` if it has none).
    func inserts() throws -> [PostgresQuery] {
        let batches = stride(from: 0, to: max(values.count, 1), by: Self.valuesPerStatement).map { start in
            values[start..<min(start + Self.valuesPerStatement, values.count)]
        }
        return try batches.enumerated().map { index, batch in
            try statement(values: batch, startsCommit: index == 0, progress: index == 0 ? progress : [], notifies: index == batches.count - 1)
        }
    }

    private func statement(values: ArraySlice<Entry>, startsCommit: Bool, progress: [ClientProgress], notifies: Bool) throws -> PostgresQuery {
        var binds = PostgresBindings()
        func bind(_ value: some PostgresEncodable & Sendable) throws -> String {
            try binds.append(value)
            return "$\(binds.count)"
        }
        func bind(_ value: String?) throws -> String {
            binds.append(value)
            return "$\(binds.count)"
        }
        let (commit, time, epoch) = (try bind(self.commit), try bind(self.time), try bind(self.epoch))
        let (scope, mutation) = (try bind(cause?.scope), try bind(cause?.mutation.rawValue))
        var parts: [String] = []
        if !values.isEmpty {
            let rows = try values.enumerated().map { index, entry in
                let (value, fields) = (entry.value, try bind(entry.rowFields))
                let position = startsCommit && index == 0 ? commit : "DEFAULT"
                let (resource, id) = (try bind(value.key.resource), try bind(value.key.id))
                let (counter, json) = (try bind(Int64(value.version.counter)), try bind(value.json))
                return "(\(position), \(commit), \(time), \(resource), \(id), \(epoch), \(counter), \(json), \(scope), \(mutation), \(fields))"
            }
            parts.append(
                """
                written AS (INSERT INTO stateloop_changes (seq, commit_seq, committed_at, resource, id, epoch, counter, json, scope, mutation, row_fields)
                VALUES \(rows.joined(separator: ", ")) RETURNING seq)
                """)
        }
        if !progress.isEmpty {
            let rows = try progress.map { client in
                let (clientScope, id) = (try bind(client.scope), try bind(client.client.rawValue))
                let sequence = try bind(Int64(bitPattern: client.lastMutationID))
                return "(\(commit), \(time), \(clientScope), \(id), \(sequence), \(scope), \(mutation))"
            }
            parts.append(
                """
                progressed AS (INSERT INTO stateloop_progress (commit_seq, committed_at, scope, client, last_sequence, cause_scope, cause_mutation)
                VALUES \(rows.joined(separator: ", ")))
                """)
        }
        let last = values.isEmpty ? "NULL::BIGINT" : "(SELECT max(seq) FROM written)"
        var notification = ""
        if notifies, let payload = self.notification {
            notification = ", pg_notify('\(Self.channel)', \(try bind(payload)))"
        }
        let with = parts.isEmpty ? "" : "WITH \(parts.joined(separator: ", ")) "
        return PostgresQuery(unsafeSQL: "\(with)SELECT \(last)\(notification)", binds: binds)
    }
}
