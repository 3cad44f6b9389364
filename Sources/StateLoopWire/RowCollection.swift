/// A collection of rows, declared once by the app and shared by its server and its clients: each
/// row a `Codable` value with an id of its own, and the fields its queries filter and sort on.
///
/// ```swift
/// let tasks = RowCollection("tasks", of: TaskRow.self) { $0.id }
///     .field("projectID") { $0.projectID }
///     .field("position") { $0.position }
/// ```
///
/// A server (StateLoopServer) stores the rows one per id, each with its own version, and sends
/// them through the queries it declares for the collection: a change of one row sends that row,
/// not the collection. A client (StateLoopCollections) keeps them in its local store and runs
/// its queries over them. A query can only read declared fields, since they are what the stores
/// index and what the server compares before and after a change.
public struct RowCollection<Row: Codable & Sendable>: Sendable {
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
            Self.isName(name),
            "RowCollection(\"\(name)\"): a collection's name is 1 to 64 letters, digits, '-', '_' or '.'; rename it"
        )
        self.name = name
        self.id = id
    }

    /// The collection with one more field that queries may filter and sort on: `read` gives
    /// its value for a row (a string, a number, a boolean, or an optional of one).
    public func field<Value: FieldValueConvertible>(_ name: String, _ read: @escaping @Sendable (Row) -> Value) -> Self {
        precondition(
            Self.isFieldName(name), "RowCollection(\"\(self.name)\").field(\"\(name)\"): a field's name is 1 to 64 letters, digits or '_'")
        precondition(
            !fields.contains { $0.name == name }, "RowCollection(\"\(self.name)\").field(\"\(name)\") is declared twice: keep one")
        var declared = self
        declared.fields.append((name, { read($0).fieldValue.canonical }))
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

    /// Whether `name` may name a collection: 1 to 64 letters, digits, `-`, `_` or `.`.
    package static func isName(_ name: String) -> Bool {
        !name.isEmpty && name.utf8.count <= 64 && name.utf8.allSatisfy { isWordByte($0) || $0 == UInt8(ascii: "-") || $0 == UInt8(ascii: ".") }
    }

    /// Whether `name` may name a field: 1 to 64 letters, digits or `_`, as a JSON path step
    /// needs no quoting.
    package static func isFieldName(_ name: String) -> Bool {
        !name.isEmpty && name.utf8.count <= 64 && name.utf8.allSatisfy(isWordByte)
    }

    private static func isWordByte(_ byte: UInt8) -> Bool {
        (UInt8(ascii: "a")...UInt8(ascii: "z")).contains(byte) || (UInt8(ascii: "A")...UInt8(ascii: "Z")).contains(byte)
            || (UInt8(ascii: "0")...UInt8(ascii: "9")).contains(byte) || byte == UInt8(ascii: "_")
    }
}
