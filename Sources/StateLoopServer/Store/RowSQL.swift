import Foundation
import GRDB
import StateLoopWire

/// How the SQLite store keeps a row's declared fields and turns a `RowQuery` into SQL.
///
/// A row's fields are a JSON object in the `fields` column; a query reads them with
/// `json_extract`, whose values (`NULL`, integers, reals, text; booleans as 1 and 0) compare
/// in SQLite's order, the order `FieldValue` follows, so that the store and
/// `RowQuery/matches(_:)` agree on every row. Collection and field names are checked tokens,
/// written into the SQL as they are, so that a query's expressions are the very ones its
/// index was made on.
package enum RowSQL {
    /// Whether `name` may name a collection: 1 to 64 letters, digits, `-`, `_` or `.`.
    package static func isCollectionName(_ name: String) -> Bool {
        RowCollection<Never>.isName(name)
    }

    /// Whether `name` may name a field: 1 to 64 letters, digits or `_`.
    package static func isFieldName(_ name: String) -> Bool {
        RowCollection<Never>.isFieldName(name)
    }

    /// The expression that reads `field` of a row.
    static func expression(_ field: String) -> String {
        "json_extract(fields, '$.\(field)')"
    }

    /// The fields as stored: a JSON object, keys sorted.
    package static func encode(_ fields: [String: FieldValue]) throws -> String {
        String(decoding: try KitJSON.encoder.encode(fields), as: UTF8.self)
    }

    /// Stored fields read back.
    package static func decode(_ text: String) throws -> [String: FieldValue] {
        try FieldsJSON.decode(text) ?? KitJSON.decoder.decode([String: FieldValue].self, from: Data(text.utf8))
    }

    /// A row change's fields as the change feed keeps them: `{"before": …, "after": …}`.
    package struct FeedFields: Codable {
        package var before: [String: FieldValue]?
        package var after: [String: FieldValue]?

        package init(before: [String: FieldValue]?, after: [String: FieldValue]?) {
            self.before = before
            self.after = after
        }

        /// The fields as the feed keeps them.
        package var text: String {
            get throws { String(decoding: try KitJSON.encoder.encode(self), as: UTF8.self) }
        }

        /// Fields the feed kept, read back.
        package init(text: String) throws {
            self = try KitJSON.decoder.decode(Self.self, from: Data(text.utf8))
        }
    }

    /// `value` as an SQL argument.
    static func argument(_ value: FieldValue) -> (any DatabaseValueConvertible)? {
        switch value {
        case .null: nil
        case .integer(let number): number
        case .real(let number): number
        case .text(let text): text
        }
    }

    /// A query a store cannot run: a collection's or a field's name that is not a token (which
    /// the SQL would take as written), or a negative limit.
    package struct InvalidQuery: Error, CustomStringConvertible {
        package let description: String
    }

    /// Throws ``InvalidQuery`` unless every name `query` writes into SQL is a token and its
    /// limit is not negative.
    package static func check(_ collection: String, _ query: RowQuery) throws {
        guard isCollectionName(collection) else { throw InvalidQuery(description: "\"\(collection)\" cannot name a collection") }
        if let field = query.fields.first(where: { !isFieldName($0) }) {
            throw InvalidQuery(description: "\"\(field)\" cannot name a field: 1 to 64 letters, digits or '_'")
        }
        if let limit = query.limit, limit < 0 { throw InvalidQuery(description: "a query's limit is at least 0") }
    }

    /// The `SELECT` that runs `query` on `collection`, with its arguments.
    static func select(_ collection: String, _ query: RowQuery) throws -> (sql: String, arguments: StatementArguments) {
        try check(collection, query)
        let (conditions, values) = query.sqliteConditions(reading: expression)
        let clauses = ["collection = '\(collection)'", "json IS NOT NULL"] + conditions
        let arguments = values.map(argument)
        let order = query.sqliteOrder(reading: expression, id: "id")
        var sql = "SELECT id, counter, json, fields FROM stateloop_rows WHERE \(clauses.joined(separator: " AND ")) ORDER BY \(order)"
        if let limit = query.limit {
            sql += " LIMIT \(limit)"
        }
        return (sql, StatementArguments(arguments))
    }

    /// The `SELECT` of one page of `query`'s whole result on `collection`: up to `limit` of the
    /// rows its conditions select (its order and limit aside), in the order of their ids, after
    /// the id `id` when given. The table's primary key reads them in that order.
    static func page(_ collection: String, _ query: RowQuery, after id: String?, limit: Int) throws -> (
        sql: String, arguments: StatementArguments
    ) {
        try check(collection, query)
        let (conditions, values) = query.sqliteConditions(reading: expression)
        var clauses = ["collection = '\(collection)'", "json IS NOT NULL"] + conditions
        var arguments = values.map(argument)
        if let id {
            clauses.append("id > ?")
            arguments.append(id)
        }
        let sql =
            "SELECT id, counter, json, fields FROM stateloop_rows WHERE \(clauses.joined(separator: " AND ")) ORDER BY id LIMIT \(max(0, limit))"
        return (sql, StatementArguments(arguments))
    }

    /// The index that answers queries on `collection` filtering on, then sorting by, `fields`
    /// in that order: partial, on the collection's live rows alone.
    static func index(_ collection: String, _ fields: [String]) -> String {
        // Quoted: the separators, which no name holds, keep two indexes' names apart.
        let name = "stateloop_rows:\(collection):\(fields.joined(separator: ","))"
        let columns = (fields.map(expression) + ["id"]).joined(separator: ", ")
        return "CREATE INDEX IF NOT EXISTS \"\(name)\" ON stateloop_rows (\(columns)) WHERE collection = '\(collection)' AND json IS NOT NULL"
    }
}
