/// What a server answers a subscription to a collection's query with, and pushes after each
/// commit that changed its result: the rows that entered or changed, the ids that left, and a
/// cookie to resume from.
///
/// On the wire:
///
/// ```json
/// {"cookie": "1764201600000.42.9f86d081884c7d65", "replace": false,
///  "rows": [{"id": "t1", "version": {"epoch": 1764201600000, "counter": 3}, "value": {…}}],
///  "removed": ["t7"], "lastMutationID": 12}
/// ```
///
/// With `replace`, `rows` is the query's whole result and every row the client held for the
/// subscription but not listed is gone; without it, the rows listed replace the client's copies
/// (or are new) and the ids of `removed` leave the subscription. The cookie is
/// `<epoch>.<position>.<query>`; cookies of one query order by epoch then position: send it back
/// as it came, and never apply an answer older than the one held. `lastMutationID` is the reader's, as on a value. The
/// article "The sync protocol" says when a server answers with a difference and when whole.
public struct RowsDifference<Row: Sendable>: Sendable {
    /// Where the server's history stood when it answered: the position to resume from.
    public var cookie: String
    /// Whether ``rows`` is the whole result, replacing what the client held.
    public var replace: Bool
    /// The rows that entered or changed (the whole result when ``replace``), in the query's
    /// order when the result was read whole.
    public var rows: [VersionedRow<Row>]
    /// The ids of rows that left the result: deleted, changed so that they no longer match, or
    /// no longer readable by the client's principal.
    public var removed: [String]
    /// The newest mutation of the reader's client the server has processed, as on a value.
    public var lastMutationID: UInt64?

    /// A difference from its parts.
    public init(cookie: String, replace: Bool, rows: [VersionedRow<Row>], removed: [String], lastMutationID: UInt64? = nil) {
        self.cookie = cookie
        self.replace = replace
        self.rows = rows
        self.removed = removed
        self.lastMutationID = lastMutationID
    }
}

extension RowsDifference: Codable where Row: Codable {}
extension RowsDifference: Equatable where Row: Equatable {}

/// A row of a collection with its id and the version the server allocated for it.
public struct VersionedRow<Row: Sendable>: Sendable {
    /// The row's primary key.
    public var id: String
    /// The row's version: every row has its own counter, as every value has.
    public var version: Version
    /// The row.
    public var value: Row

    /// A row from its parts.
    public init(id: String, version: Version, value: Row) {
        self.id = id
        self.version = version
        self.value = value
    }
}

extension VersionedRow: Codable where Row: Codable {}
extension VersionedRow: Equatable where Row: Equatable {}
extension VersionedRow: Hashable where Row: Hashable {}
