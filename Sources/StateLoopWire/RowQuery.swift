/// Which rows of a collection a query selects, and in what order: conditions on declared
/// fields, an order, and optionally a limit.
///
/// A row's fields are given as a dictionary of ``FieldValue``s; a field it lacks is `null`.
/// ``matches(_:)`` and ``precedes(_:_:)`` evaluate the query in Swift exactly as a store runs it
/// in SQL, so that the server can tell from a changed row's fields whether it entered or left a
/// query without asking the store again.
///
/// ```swift
/// let open = RowQuery(
///     where: [.init("projectID", equals: .text(project)), .init("done", equals: .bool(false))],
///     orderedBy: [.init("position")]
/// )
/// ```
public struct RowQuery: Sendable, Hashable, Codable {
    /// The conditions a row meets, all of them.
    public var conditions: [RowCondition]
    /// The order of the rows, field by field; rows equal on every field are ordered by id.
    public var order: [RowOrder]
    /// The most rows the query selects, the first in its order; `nil` for every row.
    public var limit: Int?

    /// A query from its parts.
    public init(where conditions: [RowCondition] = [], orderedBy order: [RowOrder] = [], limit: Int? = nil) {
        self.conditions = conditions
        self.order = order
        self.limit = limit.map { max(0, $0) }
    }

    /// Whether a row with `fields` meets every condition (the limit aside).
    public func matches(_ fields: [String: FieldValue]) -> Bool {
        conditions.allSatisfy { $0.isMet(by: fields[$0.field] ?? .null) }
    }

    /// Whether the row `a` comes before the row `b` in the query's order, its id deciding
    /// between rows equal on every ordered field.
    public func precedes(_ a: (id: String, fields: [String: FieldValue]), _ b: (id: String, fields: [String: FieldValue])) -> Bool {
        precedes((a.id, keys(of: a.fields)), (b.id, keys(of: b.fields)))
    }

    /// ``precedes(_:_:)`` for rows given by their ordered fields' values (``keys(of:)``): what a
    /// sorted result keeps of each row to place it.
    package func precedes(_ a: (id: String, keys: [FieldValue]), _ b: (id: String, keys: [FieldValue])) -> Bool {
        for (index, field) in order.enumerated() {
            let (x, y) = (a.keys[index], b.keys[index])
            if x == y { continue }
            return field.descending ? y < x : x < y
        }
        return a.id.utf8.lexicographicallyPrecedes(b.id.utf8)
    }

    /// The values of the ordered fields of a row with `fields`, in the order's order.
    package func keys(of fields: [String: FieldValue]) -> [FieldValue] {
        order.map { fields[$0.field] ?? .null }
    }

    /// Every field the query reads, conditions first, each once.
    public var fields: [String] {
        var seen: [String] = []
        for name in conditions.map(\.field) + order.map(\.field) where !seen.contains(name) {
            seen.append(name)
        }
        return seen
    }
}

/// One condition of a ``RowQuery`` on one field.
///
/// Equality is null-safe (SQL's `IS`): a condition `equals: .null` selects the rows without
/// the field. A bound (`atLeast`, `below`…) is never met by `null`, as in SQL.
public struct RowCondition: Sendable, Hashable, Codable {
    /// The field's name.
    public var field: String
    /// What its value must be.
    public var test: Test

    /// What a field's value must be.
    public enum Test: Sendable, Hashable, Codable {
        /// Equal to the value.
        case equals(FieldValue)
        /// Equal to one of the values; none selects no row.
        case oneOf([FieldValue])
        /// At least the value.
        case atLeast(FieldValue)
        /// Greater than the value.
        case above(FieldValue)
        /// At most the value.
        case atMost(FieldValue)
        /// Less than the value.
        case below(FieldValue)
    }

    /// A condition from its parts.
    public init(_ field: String, _ test: Test) {
        self.field = field
        self.test =
            switch test {
            case .equals(let value): .equals(value.canonical)
            case .oneOf(let values): .oneOf(values.map(\.canonical))
            case .atLeast(let value): .atLeast(value.canonical)
            case .above(let value): .above(value.canonical)
            case .atMost(let value): .atMost(value.canonical)
            case .below(let value): .below(value.canonical)
            }
    }

    /// `field` equal to `value`.
    public init(_ field: String, equals value: FieldValue) {
        self.init(field, .equals(value))
    }

    /// `field` equal to one of `values`.
    public init(_ field: String, in values: [FieldValue]) {
        self.init(field, .oneOf(values))
    }

    /// Whether `value` meets the condition.
    public func isMet(by value: FieldValue) -> Bool {
        switch test {
        case .equals(let wanted): value == wanted
        case .oneOf(let wanted): wanted.contains(value)
        case .atLeast(let bound): value != .null && bound != .null && !(value < bound)
        case .above(let bound): value != .null && bound != .null && bound < value
        case .atMost(let bound): value != .null && bound != .null && !(bound < value)
        case .below(let bound): value != .null && bound != .null && value < bound
        }
    }
}

/// One field of a ``RowQuery``'s order.
public struct RowOrder: Sendable, Hashable, Codable {
    /// The field's name.
    public var field: String
    /// Largest first; smallest (`null` first) otherwise.
    public var descending: Bool

    /// An order on `field`, smallest first unless `descending`.
    public init(_ field: String, descending: Bool = false) {
        self.field = field
        self.descending = descending
    }
}

extension RowQuery {
    /// The query's conditions as SQLite clauses (all to be met) with their arguments, each
    /// field read by `field`'s expression: null-safe equality (`IS`), bounds never met by
    /// `null`, as ``matches(_:)`` evaluates them. Shared by the stores of both sides.
    package func sqliteConditions(reading field: (String) -> String) -> (clauses: [String], arguments: [FieldValue]) {
        var clauses: [String] = []
        var arguments: [FieldValue] = []
        for condition in conditions {
            let expression = field(condition.field)
            switch condition.test {
            case .equals(let value):
                clauses.append("\(expression) IS ?")
                arguments.append(value)
            case .oneOf(let values):
                // IS, one by one: null-safe, as `equals` is (IN never matches a null).
                clauses.append(values.isEmpty ? "0" : "(" + values.map { _ in "\(expression) IS ?" }.joined(separator: " OR ") + ")")
                arguments += values
            case .atLeast(let bound), .above(let bound), .atMost(let bound), .below(let bound):
                guard bound != .null else {
                    clauses.append("0")
                    continue
                }
                let comparison =
                    switch condition.test {
                    case .atLeast: ">="
                    case .above: ">"
                    case .atMost: "<="
                    default: "<"
                    }
                clauses.append("\(expression) \(comparison) ?")
                arguments.append(bound)
            }
        }
        return (clauses, arguments)
    }

    /// The query's order as an SQLite `ORDER BY` list, ids last, each field read by `field`'s
    /// expression and the id by `id`.
    package func sqliteOrder(reading field: (String) -> String, id: String) -> String {
        (order.map { "\(field($0.field)) \($0.descending ? "DESC" : "ASC")" } + ["\(id) ASC"]).joined(separator: ", ")
    }
}
