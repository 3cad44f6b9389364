import StateLoopWire

/// A collection of rows that the server owns, declared once by the app: each row a `Codable`
/// value with an id of its own, and the fields its queries filter and sort on.
///
/// ```swift
/// let tasks = ServerCollection("tasks", of: TaskRow.self) { $0.id }
///     .field("projectID") { $0.projectID }
///     .field("position") { $0.position }
/// ```
///
/// Rows are stored one per id, each with its own version, and reach a client through the
/// queries declared for it (``SyncServer/serve(_:at:queries:readable:)``): a change of one row
/// sends that row, not the collection. A query can only read declared fields, since they are
/// what the store indexes and what the kit compares before and after a change.
public struct ServerCollection<Row: Codable & Sendable>: Sendable {
    /// The name the store keeps the rows under: 1 to 64 letters, digits, `-`, `_` or `.`.
    /// Changing it orphans the stored rows.
    public let name: String
    /// The row's id, its primary key.
    let id: @Sendable (Row) -> String
    /// The declared fields, in the order declared.
    private(set) var fields: [(name: String, read: @Sendable (Row) -> FieldValue)] = []

    /// Declares the collection `name`, whose rows are `Row`s identified by `id`.
    public init(_ name: String, of type: Row.Type = Row.self, id: @escaping @Sendable (Row) -> String) {
        precondition(
            RowSQL.isCollectionName(name),
            "ServerCollection(\"\(name)\"): a collection's name is 1 to 64 letters, digits, '-', '_' or '.'; rename it"
        )
        self.name = name
        self.id = id
    }

    /// The collection with one more field that queries may filter and sort on: `read` gives
    /// its value for a row (a string, a number, a boolean, or an optional of one).
    public func field<Value: FieldValueConvertible>(_ name: String, _ read: @escaping @Sendable (Row) -> Value) -> Self {
        precondition(
            RowSQL.isFieldName(name), "ServerCollection(\"\(self.name)\").field(\"\(name)\"): a field's name is 1 to 64 letters, digits or '_'")
        precondition(
            !fields.contains { $0.name == name }, "ServerCollection(\"\(self.name)\").field(\"\(name)\") is declared twice: keep one")
        var declared = self
        declared.fields.append((name, { read($0).fieldValue }))
        return declared
    }

    /// The names of the declared fields.
    public var fieldNames: [String] {
        fields.map(\.name)
    }

    /// The declared fields of `row`, as queries read them.
    public func fields(of row: Row) -> [String: FieldValue] {
        Dictionary(uniqueKeysWithValues: fields.map { ($0.name, $0.read(row)) })
    }

    /// The id of `row`.
    public func id(of row: Row) -> String {
        id(row)
    }

    /// The key of the row `id`.
    public func key(_ id: String) -> ResourceKey {
        ResourceKey(resource: name, id: id)
    }
}
