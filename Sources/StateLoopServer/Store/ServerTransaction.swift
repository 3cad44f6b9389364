import Foundation
import StateLoopWire

/// What a mutation handler or a server-side ``SyncServer/update(_:)`` reads and writes: typed
/// values of declared resources, inside one store transaction.
///
/// Writes are held until the body returns and then written in the order they were made, each
/// key once, so a body that throws (a ``MutationRefusal`` included) leaves the store as it was;
/// reads see the body's own writes. A key whose held value encodes to the bytes the store holds
/// is not written at all (see ``write(_:to:_:)``). Valid only inside the body it is handed to.
public final class ServerTransaction {
    private let store: any StoreTransaction
    private let mayWrite: (ResourceKey) -> Bool
    private let isReadOnly: Bool
    /// The id of the mutation this transaction applies (its `Mutation-ID`), `nil` in a
    /// server-side ``SyncServer/update(_:)``: for the handler's logs and audits. The kit runs a
    /// handler at most once per id and principal, refusals included.
    public let mutationID: MutationID?
    private var pending: [ResourceKey: Data] = [:]
    private var order: [ResourceKey] = []
    /// The rows written (`json` `nil`: deleted), held as values are.
    private var pendingRows: [ResourceKey: (json: Data?, fields: [String: FieldValue])] = [:]
    private var rowOrder: [ResourceKey] = []
    /// The versions ``commitWrites()`` allocated for rows (deletions too), by key.
    private(set) var rowVersions: [ResourceKey: Version] = [:]
    /// The push sockets to close once this transaction has committed (sessions it ended), and
    /// only then: a transaction that throws ends no session, so it closes nothing.
    private(set) var socketsToClose = SocketClosings()
    /// The kit's: keys sorted, so that an unchanged value makes the bytes the store holds.
    private let encoder = KitJSON.encoder
    private let decoder = KitJSON.decoder

    init(store: any StoreTransaction, mayWrite: @escaping (ResourceKey) -> Bool, mutationID: MutationID? = nil, isReadOnly: Bool = false) {
        self.store = store
        self.mayWrite = mayWrite
        self.isReadOnly = isReadOnly
        self.mutationID = mutationID
    }

    /// The epoch of the versions this transaction allocates.
    public var epoch: UInt64 {
        store.epoch
    }

    /// The value `id` of `resource`, with this transaction's writes; `nil` if it was never
    /// written.
    ///
    /// - Throws: the store's error, or `DecodingError` if the stored JSON is not a `Value`.
    public func read<Value>(_ resource: ServerResource<Value>, _ id: String) throws -> Value? {
        let key = resource.key(id)
        guard let json = try pending[key] ?? StoreFailure.wrap({ try store.value(of: key)?.json }) else { return nil }
        return try decoder.decode(Value.self, from: json)
    }

    /// A page of `resource`'s values whose ids start with `prefix`, in the order of their ids
    /// (newest first when `descending`), after `cursor`: each with its id. Reads what is stored,
    /// not this transaction's own writes.
    ///
    /// ```swift
    /// let page = try transaction.values(of: pastRides, prefix: "\(user)/", after: cursor, limit: 10, descending: true)
    /// ```
    public func values<Value>(
        of resource: ServerResource<Value>, prefix: String, after cursor: String? = nil, limit: Int, descending: Bool = false
    ) throws -> [(id: String, value: Value)] {
        let stored = try StoreFailure.wrap {
            try store.values(of: resource.name, prefix: prefix, after: cursor, limit: limit, descending: descending)
        }
        return try stored.map { ($0.key.id, try decoder.decode(Value.self, from: $0.json)) }
    }

    /// The stored version of `id` of `resource`, before this transaction's writes.
    public func version<Value>(of resource: ServerResource<Value>, _ id: String) throws -> Version? {
        try StoreFailure.wrap { try store.value(of: resource.key(id))?.version }
    }

    /// Sets `id` of `resource` to `value`. The new version is allocated when the body returns,
    /// if the value changed.
    ///
    /// A value equal to the stored one is no change: when the body returns, a key whose value
    /// encodes (keys sorted, so equal values make equal bytes) to exactly the JSON the store
    /// holds is skipped: its version stays, the change feed keeps no entry for it and no push
    /// goes out. So a handler may write what it computed without checking it changed, and a
    /// key set to another value and back within one transaction is no change either. A key
    /// with no stored value is always written, even with `null` or an empty value. A mutation
    /// whose every write is skipped is answered as any other: it is remembered, its client's
    /// progress (`lastMutationID`) moves on, and its receipt names the key's current version.
    /// The comparison is of bytes: a value whose encoding varies between equal values (a `Set`,
    /// or a dictionary keyed by something other than strings, which encode in their iteration
    /// order) may be written although equal, as every write was before.
    ///
    /// - Throws: a ``MutationRefusal`` with status 404 when the principal the mutation runs for
    ///   may not write the key (the same answer as a key that does not exist), the encoder's
    ///   error, or ``ReadOnlyTransaction`` inside ``SyncServer/read(_:)``.
    public func write<Value>(_ value: Value, to resource: ServerResource<Value>, _ id: String) throws {
        try write(value, to: resource, id, checked: true)
    }

    // MARK: Rows

    /// The row `id` of `collection`, with this transaction's writes; `nil` if there is none
    /// (never written, or deleted).
    ///
    /// - Throws: the store's error (``CollectionsUnsupported`` for a store without
    ///   collections), or `DecodingError` if the stored JSON is not a `Row`.
    public func row<Row>(_ id: String, of collection: RowCollection<Row>) throws -> Row? {
        let key = collection.key(id)
        let json: Data?
        if let held = pendingRows[key] {
            json = held.json
        } else {
            json = try StoreFailure.wrap { try store.row(of: key)?.json }
        }
        return try json.map { try decoder.decode(Row.self, from: $0) }
    }

    /// The stored rows of `collection` that `query` selects, in its order: what is committed,
    /// not this transaction's own writes.
    public func rows<Row>(of collection: RowCollection<Row>, matching query: RowQuery) throws -> [Row] {
        try StoreFailure.wrap { try store.rows(of: collection.name, matching: query) }.map { try decoder.decode(Row.self, from: $0.json) }
    }

    /// What `mutation` writes when replayed over `collection`'s rows as this transaction sees
    /// them: each row it sets by id, `nil` for one it deletes. Nothing is written: the caller
    /// checks the rows, then writes them (``write(_:to:)``, ``delete(_:from:)``). The device
    /// replays the same type, so both sides agree on what a change does.
    ///
    /// ```swift
    /// for (id, row) in try transaction.replay(mutation, on: tasks) {
    ///     if let row { try transaction.write(row, to: tasks) } else { try transaction.delete(id, from: tasks) }
    /// }
    /// ```
    ///
    /// - Throws: the first error a read of a row met (the store's, or `DecodingError` for a
    ///   stored row that is not a `Row`): a row that could not be read is never taken as
    ///   missing, which would have the change write over it.
    public func replay<M: RowMutation>(_ mutation: M, on collection: RowCollection<M.Row>) throws -> [String: M.Row?] {
        var failure: (any Error)?
        var rows = RowEdits<M.Row> { id in
            do {
                return try self.row(id, of: collection)
            } catch {
                failure = failure ?? error
                return nil
            }
        }
        mutation.apply(to: &rows)
        if let failure { throw failure }
        return rows.written
    }

    /// Writes `row` into `collection` under its id, a new row or a new value of one. As with
    /// values, the write is held until the body returns and skipped if the row's JSON is the
    /// one stored.
    ///
    /// - Throws: a ``MutationRefusal`` with status 404 when the principal the mutation runs for
    ///   may not write the row's key, the encoder's error, or ``ReadOnlyTransaction``.
    public func write<Row>(_ row: Row, to collection: RowCollection<Row>) throws {
        try hold(try encoder.encode(row), fields: collection.fields(of: row), at: collection.key(collection.id(of: row)))
    }

    /// Deletes the row `id` of `collection`, if there is one; every subscription it was in
    /// learns that it left.
    ///
    /// - Throws: as ``write(_:to:)``.
    public func delete<Row>(_ id: String, from collection: RowCollection<Row>) throws {
        try hold(nil, fields: [:], at: collection.key(id))
    }

    private func hold(_ json: Data?, fields: [String: FieldValue], at key: ResourceKey) throws {
        guard !isReadOnly else { throw ReadOnlyTransaction(key: key) }
        guard mayWrite(key) else { throw MutationRefusal.notFound }
        if pendingRows[key] == nil { rowOrder.append(key) }
        pendingRows[key] = (json, fields)
    }

    /// ``write(_:to:_:)``, with the access policy asked (`checked`) or not: the kit's own
    /// records (``Sessions``) are not the app's values, which its policy is about.
    func write<Value>(_ value: Value, to resource: ServerResource<Value>, _ id: String, checked: Bool) throws {
        let key = resource.key(id)
        guard !isReadOnly else { throw ReadOnlyTransaction(key: key) }
        guard !checked || mayWrite(key) else { throw MutationRefusal.notFound }
        if pending[key] == nil { order.append(key) }
        pending[key] = try encoder.encode(value)
    }

    /// This transaction's own writes of `resource` whose ids start with `prefix`, which
    /// ``values(of:prefix:after:limit:descending:)`` does not see.
    func written<Value>(of resource: ServerResource<Value>, prefix: String) throws -> [(id: String, value: Value)] {
        try order.filter { $0.resource == resource.name && $0.id.hasPrefix(prefix) }.map { key in
            (key.id, try decoder.decode(Value.self, from: pending[key]!))
        }
    }

    /// Closes the push sockets of the principal whose id is `principalID` once this transaction
    /// has committed.
    func closeSocketsAfterCommit(of principalID: String) {
        socketsToClose.principals.insert(principalID)
    }

    /// Closes every push socket once this transaction has committed.
    func closeAllSocketsAfterCommit() {
        socketsToClose.all = true
    }

    /// A write inside ``SyncServer/read(_:)``, which cannot write.
    public struct ReadOnlyTransaction: Error, CustomStringConvertible {
        /// The key the body tried to write.
        public let key: ResourceKey

        public var description: String {
            "cannot write \(key.resource)/\(key.id) in SyncServer.read: make the change in SyncServer.update"
        }
    }

    /// Writes the held values that differ from the stored ones; returns the versions allocated,
    /// by key. A key left unchanged is not in it: its version is the stored one, which a
    /// caller that needs it reads (a mutation's receipt does).
    func commitWrites() throws -> [ResourceKey: Version] {
        var versions: [ResourceKey: Version] = [:]
        for key in order {
            if let version = try StoreFailure.wrap({ try store.writeIfChanged(pending[key]!, to: key) }) {
                versions[key] = version
            }
        }
        for key in rowOrder {
            let held = pendingRows[key]!
            if let version = try StoreFailure.wrap({ try store.writeRow(held.json, fields: held.fields, to: key) }) {
                rowVersions[key] = version
            }
        }
        pending = [:]
        order = []
        pendingRows = [:]
        rowOrder = []
        return versions
    }
}

/// The push sockets a committed transaction closes: those of some principals, or all.
struct SocketClosings: Sendable {
    var all = false
    var principals: Set<String> = []

    var isEmpty: Bool {
        !all && principals.isEmpty
    }
}
