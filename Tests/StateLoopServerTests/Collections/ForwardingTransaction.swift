import Foundation
import StateLoopServer
import StateLoopWire

/// A store transaction that hands every operation to `base`, for tests that change one of them
/// in a subclass. It does not implement `rows(of:matching:after:limit:)` nor `holdCommits()`:
/// those are the protocol's defaults (the paged read built on the whole one, and no hold).
class ForwardingTransaction: StoreTransaction {
    let base: any StoreTransaction

    init(_ base: any StoreTransaction) {
        self.base = base
    }

    var epoch: UInt64 { base.epoch }
    var cause: ChangeCause? {
        get { base.cause }
        set { base.cause = newValue }
    }

    func rowFeedBounds() throws -> RowFeedBounds { try base.rowFeedBounds() }
    func value(of key: ResourceKey) throws -> StoredValue? { try base.value(of: key) }
    func values(of resource: String, prefix: String, after cursor: String?, limit: Int, descending: Bool) throws -> [StoredValue] {
        try base.values(of: resource, prefix: prefix, after: cursor, limit: limit, descending: descending)
    }
    func write(_ json: Data, to key: ResourceKey) throws -> Version { try base.write(json, to: key) }
    func writeIfChanged(_ json: Data, to key: ResourceKey) throws -> Version? { try base.writeIfChanged(json, to: key) }
    func answer(to mutation: String, scope: String) throws -> RememberedAnswer? { try base.answer(to: mutation, scope: scope) }
    func remember(_ answer: RememberedAnswer, to mutation: String, scope: String, client: ClientID?, sequence: UInt64?) throws {
        try base.remember(answer, to: mutation, scope: scope, client: client, sequence: sequence)
    }
    func lastMutationID(of client: ClientID, scope: String) throws -> UInt64? { try base.lastMutationID(of: client, scope: scope) }
    func setLastMutationID(_ sequence: UInt64, of client: ClientID, scope: String) throws {
        try base.setLastMutationID(sequence, of: client, scope: scope)
    }
    func row(of key: ResourceKey) throws -> StoredRow? { try base.row(of: key) }
    func writeRow(_ json: Data?, fields: [String: FieldValue], to key: ResourceKey) throws -> Version? {
        try base.writeRow(json, fields: fields, to: key)
    }
    func rows(of collection: String, matching query: RowQuery) throws -> [StoredRow] { try base.rows(of: collection, matching: query) }
    func rowChanges(of collection: String, after position: UInt64, limit: Int) throws -> [RowChange] {
        try base.rowChanges(of: collection, after: position, limit: limit)
    }
}
