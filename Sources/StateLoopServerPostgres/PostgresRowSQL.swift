import Foundation
import PostgresNIO
import StateLoopServer
import StateLoopWire

/// How the PostgreSQL store turns a `RowQuery` into SQL over rows whose declared fields are a
/// `JSONB` object, in the order `FieldValue` follows (SQLite's): `null` first, then numbers by
/// value, then text by its bytes.
///
/// `JSONB`'s own order puts numbers after strings, so a field is read as three expressions, which
/// order as `FieldValue` does and which an index can hold: its kind's rank (0 for `null` or
/// missing, 1 for a number, 2 for text), its value as a number, and its value as text in the "C"
/// collation (bytes).
enum PostgresRowSQL {
    /// The three expressions that read `field`: rank, number, text.
    static func expressions(_ field: String) -> (rank: String, number: String, text: String) {
        let json = "fields->'\(field)'"
        return (
            "(CASE jsonb_typeof(\(json)) WHEN 'number' THEN 1 WHEN 'string' THEN 2 ELSE 0 END)",
            "(CASE WHEN jsonb_typeof(\(json)) = 'number' THEN (fields->>'\(field)')::numeric END)",
            "((CASE WHEN jsonb_typeof(\(json)) = 'string' THEN fields->>'\(field)' END) COLLATE \"C\")"
        )
    }

    /// The `SELECT` that runs `query` on `collection`.
    static func select(_ collection: String, _ query: RowQuery) throws -> PostgresQuery {
        let (clauses, binds) = try conditions(collection, query)
        let order = query.order.flatMap { order -> [String] in
            let (rank, number, text) = expressions(order.field)
            let direction = order.descending ? "DESC" : "ASC"
            return ["\(rank) \(direction)", "\(number) \(direction)", "\(text) \(direction)"]
        }
        var sql = "SELECT id, counter, json, fields::text FROM stateloop_rows WHERE \(clauses.joined(separator: " AND ")) ORDER BY "
        sql += (order + ["id ASC"]).joined(separator: ", ")
        if let limit = query.limit { sql += " LIMIT \(limit)" }
        return PostgresQuery(unsafeSQL: sql, binds: binds)
    }

    /// The `SELECT` of one page of `query`'s whole result on `collection`: up to `limit` of the
    /// rows its conditions select (its order and limit aside), in the order of their ids (the
    /// "C" collation, bytes, as SQLite's), after the id `id` when given.
    static func page(_ collection: String, _ query: RowQuery, after id: String?, limit: Int) throws -> PostgresQuery {
        var (clauses, binds) = try conditions(collection, query)
        if let id {
            binds.append(id)
            clauses.append("id > $\(binds.count)")
        }
        let sql =
            "SELECT id, counter, json, fields::text FROM stateloop_rows WHERE \(clauses.joined(separator: " AND ")) ORDER BY id LIMIT \(max(0, limit))"
        return PostgresQuery(unsafeSQL: sql, binds: binds)
    }

    /// The `WHERE` clauses of `query`'s conditions on `collection`'s live rows, with their
    /// bindings.
    private static func conditions(_ collection: String, _ query: RowQuery) throws -> (clauses: [String], binds: PostgresBindings) {
        var binds = PostgresBindings()
        func bind(_ value: FieldValue) throws -> String {
            switch value {
            case .null: return "NULL"
            // A number as its JSON, the very text a field holds, read as `numeric`: a binary
            // double would not equal the field's decimal (0.1).
            case .integer(let number): binds.append(String(number))
            case .real(let number): binds.append(String(decoding: try JSONEncoder().encode(number), as: UTF8.self))
            case .text(let text): binds.append(text)
            }
            return value.isText ? "$\(binds.count)::text" : "$\(binds.count)::numeric"
        }
        /// Whether the field is `value`, null-safe.
        func equals(_ field: String, _ value: FieldValue) throws -> String {
            let (rank, number, text) = expressions(field)
            switch value {
            case .null: return "\(rank) = 0"
            case .integer, .real: return "(\(rank) = 1 AND \(number) = \(try bind(value)))"
            case .text: return "(\(rank) = 2 AND \(text) = \(try bind(value)) COLLATE \"C\")"
            }
        }
        /// Whether the field is after (`greater`) or before `bound` in the order, or equal to it
        /// too (`orEqual`); never met by `null`, nor with a `null` bound.
        func compares(_ field: String, _ bound: FieldValue, greater: Bool, orEqual: Bool) throws -> String {
            let (rank, number, text) = expressions(field)
            let comparison = (greater ? ">" : "<") + (orEqual ? "=" : "")
            switch bound {
            case .null:
                return "FALSE"
            case .integer, .real:
                let within = "(\(rank) = 1 AND \(number) \(comparison) \(try bind(bound)))"
                return greater ? "(\(within) OR \(rank) = 2)" : within
            case .text:
                let within = "(\(rank) = 2 AND \(text) \(comparison) \(try bind(bound)) COLLATE \"C\")"
                return greater ? within : "(\(within) OR \(rank) = 1)"
            }
        }
        var clauses = ["collection = '\(collection)'", "json IS NOT NULL"]
        for condition in query.conditions {
            let field = condition.field
            switch condition.test {
            case .equals(let value): clauses.append(try equals(field, value))
            case .oneOf(let values):
                clauses.append(values.isEmpty ? "FALSE" : "(" + (try values.map { try equals(field, $0) }).joined(separator: " OR ") + ")")
            case .atLeast(let bound): clauses.append(try compares(field, bound, greater: true, orEqual: true))
            case .above(let bound): clauses.append(try compares(field, bound, greater: true, orEqual: false))
            case .atMost(let bound): clauses.append(try compares(field, bound, greater: false, orEqual: true))
            case .below(let bound): clauses.append(try compares(field, bound, greater: false, orEqual: false))
            }
        }
        return (clauses, binds)
    }

    /// The index that answers `collection`'s queries on `fields` in that order: partial, on the
    /// collection's live rows.
    static func index(_ collection: String, _ fields: [String]) -> String {
        let columns = fields.flatMap { field -> [String] in
            let (rank, number, text) = expressions(field)
            return [rank, number, text]
        }
        // A name PostgreSQL keeps whole (63 bytes): a digest of what the index covers.
        let name = "stateloop_rows_" + Sessions.digest(of: "\(collection):\(fields.joined(separator: ","))").prefix(32)
        return "CREATE INDEX IF NOT EXISTS \(name) ON stateloop_rows (\((columns + ["id"]).joined(separator: ", "))) "
            + "WHERE collection = '\(collection)' AND json IS NOT NULL"
    }
}

extension FieldValue {
    /// Whether the value is text.
    fileprivate var isText: Bool {
        if case .text = self { return true }
        return false
    }
}
