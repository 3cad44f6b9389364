import StateLoopWire

/// The mutations of a collection the app only reads: there are none to make.
/// ``LocalStore/collection(_:)`` gives such a collection.
public enum NoRowMutation<Row: Codable & Sendable>: RowMutation {
    public init(from decoder: any Decoder) throws {
        throw DecodingError.dataCorrupted(.init(codingPath: decoder.codingPath, debugDescription: "a read-only collection has no mutations"))
    }

    public func encode(to encoder: any Encoder) throws {}

    public func apply(to rows: inout RowEdits<Row>) {}
}

extension LocalStore {
    /// The local collection `declaration`, which the app only reads: its rows come from the
    /// server's answers alone.
    public func collection<Row>(_ declaration: RowCollection<Row>) -> LocalCollection<Row, NoRowMutation<Row>> {
        collection(declaration, mutations: NoRowMutation<Row>.self, send: nil)
    }
}
