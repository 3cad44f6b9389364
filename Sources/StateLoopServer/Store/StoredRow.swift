import Foundation
import StateLoopWire

/// A row of a collection as a store holds it: its key (the collection and the row's id), the
/// version allocated when it was last written, its JSON, and its declared fields.
public struct StoredRow: Sendable, Hashable {
    /// The collection (the key's resource) and the row's id.
    public var key: ResourceKey
    /// The version the store allocated when the row was last written.
    public var version: Version
    /// The row's JSON, as its collection's `Row` encodes it.
    public var json: Data
    /// The row's declared fields, as its collection extracts them: what queries read.
    public var fields: [String: FieldValue]

    /// A stored row from its parts.
    public init(key: ResourceKey, version: Version, json: Data, fields: [String: FieldValue]) {
        self.key = key
        self.version = version
        self.json = json
        self.fields = fields
    }
}

/// One write of a row, as a commit made it and the collections' change feed keeps it: the
/// row's declared fields before and after, so that whoever follows a query can tell whether the
/// row entered it, changed in it or left it without reading the store again.
public struct RowChange: Sendable, Hashable {
    /// The entry's position in the collections' feed (rises by at least one per entry, in
    /// commit order); 0 in a commit's changes before a store numbered it.
    public var position: UInt64
    /// The collection and the row's id.
    public var key: ResourceKey
    /// The version allocated for this write: a deletion raises the counter too, so that a row
    /// made again later continues its versions.
    public var version: Version
    /// The row's JSON after the write; `nil` for a deletion.
    public var json: Data?
    /// The row's fields before the write; `nil` when the row did not exist (or was deleted).
    public var before: [String: FieldValue]?
    /// The row's fields after the write; `nil` for a deletion.
    public var after: [String: FieldValue]?

    /// A row change from its parts.
    public init(
        position: UInt64, key: ResourceKey, version: Version, json: Data?, before: [String: FieldValue]?, after: [String: FieldValue]?
    ) {
        self.position = position
        self.key = key
        self.version = version
        self.json = json
        self.before = before
        self.after = after
    }
}

/// Where the collections' change feed stands: its newest position, and the newest position it
/// has forgotten (a cookie before it cannot be caught up from the feed).
public struct RowFeedBounds: Sendable, Hashable {
    /// The newest entry's position; 0 before the first.
    public var newest: UInt64
    /// The newest position pruned; 0 when nothing was.
    public var forgottenThrough: UInt64

    /// Bounds from their parts.
    public init(newest: UInt64, forgottenThrough: UInt64) {
        self.newest = newest
        self.forgottenThrough = forgottenThrough
    }
}

/// A store that keeps no collections (``StoreTransaction``'s row operations are not
/// implemented by it): declare collections on a ``SQLiteStore``.
public struct CollectionsUnsupported: Error, CustomStringConvertible {
    /// The store's type.
    public let store: String

    public var description: String {
        "\(store) keeps no collections: serve collections from a SQLiteStore"
    }
}

extension StoreTransaction {
    public func row(of key: ResourceKey) throws -> StoredRow? {
        throw CollectionsUnsupported(store: "\(type(of: self))")
    }

    public func writeRow(_ json: Data?, fields: [String: FieldValue], to key: ResourceKey) throws -> Version? {
        throw CollectionsUnsupported(store: "\(type(of: self))")
    }

    public func rows(of collection: String, matching query: RowQuery) throws -> [StoredRow] {
        throw CollectionsUnsupported(store: "\(type(of: self))")
    }

    /// The query's whole result read through ``rows(of:matching:)``, then put in the order of
    /// the ids and cut: right for any store, at the cost of reading every row for each page.
    public func rows(of collection: String, matching query: RowQuery, after id: String?, limit: Int) throws -> [StoredRow] {
        var unordered = query
        (unordered.order, unordered.limit) = ([], nil)
        let rows = try self.rows(of: collection, matching: unordered).filter { row in
            id.map { $0.utf8.lexicographicallyPrecedes(row.key.id.utf8) } ?? true
        }
        return Array(rows.sorted { $0.key.id.utf8.lexicographicallyPrecedes($1.key.id.utf8) }.prefix(max(0, limit)))
    }

    public func rowChanges(of collection: String, after position: UInt64, limit: Int) throws -> [RowChange] {
        throw CollectionsUnsupported(store: "\(type(of: self))")
    }

    public func rowFeedBounds() throws -> RowFeedBounds {
        throw CollectionsUnsupported(store: "\(type(of: self))")
    }

    /// Nothing: a store whose write transactions exclude each other holds commits already.
    public func holdCommits() throws {}
}
