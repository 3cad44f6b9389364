import Foundation
import PostgresNIO
import StateLoopServer
import StateLoopWire

/// One commit's entries in the change feed, as one statement: each value written
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
    let values: [StoredValue]
    let progress: [ClientProgress]

    /// The channel the notifications go out on.
    static let channel = "stateloop_feed"

    /// The statement; its one row holds the position of the last value (`NULL` if none).
    func insert() throws -> PostgresQuery {
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
            let rows = try values.enumerated().map { index, value in
                let position = index == 0 ? commit : "DEFAULT"
                let (resource, id) = (try bind(value.key.resource), try bind(value.key.id))
                let (counter, json) = (try bind(Int64(value.version.counter)), try bind(value.json))
                return "(\(position), \(commit), \(time), \(resource), \(id), \(epoch), \(counter), \(json), \(scope), \(mutation))"
            }
            parts.append("""
                written AS (INSERT INTO stateloop_changes (seq, commit_seq, committed_at, resource, id, epoch, counter, json, scope, mutation)
                VALUES \(rows.joined(separator: ", ")) RETURNING seq)
                """)
        }
        if !progress.isEmpty {
            let rows = try progress.map { client in
                let (clientScope, id) = (try bind(client.scope), try bind(client.client.rawValue))
                let sequence = try bind(Int64(bitPattern: client.lastMutationID))
                return "(\(commit), \(time), \(clientScope), \(id), \(sequence), \(scope), \(mutation))"
            }
            parts.append("""
                progressed AS (INSERT INTO stateloop_progress (commit_seq, committed_at, scope, client, last_sequence, cause_scope, cause_mutation)
                VALUES \(rows.joined(separator: ", ")))
                """)
        }
        let last = values.isEmpty ? "NULL::BIGINT" : "(SELECT max(seq) FROM written)"
        let sql = "WITH \(parts.joined(separator: ", ")) SELECT \(last), pg_notify('\(Self.channel)', '')"
        return PostgresQuery(unsafeSQL: sql, binds: binds)
    }
}
