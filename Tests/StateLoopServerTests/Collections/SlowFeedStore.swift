import Foundation
import StateLoopServer
import StateLoopWire

/// A store whose transactions take 20 ms to read where the change feed stands: a socket's
/// opening that read its first answer beside commits, rather than in a write that holds them
/// back, would miss the commits made meanwhile.
final class SlowFeedStore: ServerStore {
    private let base: any ServerStore

    init(_ base: any ServerStore) {
        self.base = base
    }

    var epoch: UInt64 { base.epoch }

    func write<Result: Sendable>(_ body: @Sendable (any StoreTransaction) throws -> Result) async throws -> Result {
        try await base.write { try body(SlowTransaction($0)) }
    }

    func read<Result: Sendable>(_ body: @Sendable (any StoreTransaction) throws -> Result) async throws -> Result {
        try await base.read { try body(SlowTransaction($0)) }
    }

    func read(_ key: ResourceKey, lastMutationIDOf client: ClientID?, scope: String) async throws -> (value: StoredValue?, lastMutationID: UInt64?) {
        try await base.read(key, lastMutationIDOf: client, scope: scope)
    }

    func forgetClients(idleSince cutoff: Date) async throws -> Int { try await base.forgetClients(idleSince: cutoff) }
    func observeCommits(_ observer: @escaping @Sendable (CommittedChanges) -> Void) { base.observeCommits(observer) }
    func changes(after sequence: UInt64, limit: Int) async throws -> [StoredChange] { try await base.changes(after: sequence, limit: limit) }
    func forgetChanges(committedBefore cutoff: Date) async throws -> Int { try await base.forgetChanges(committedBefore: cutoff) }
    func prepareRows(of collection: String, indexedBy fields: [String]) async throws {
        try await base.prepareRows(of: collection, indexedBy: fields)
    }

    /// A transaction of the base store, slow to read the feed's bounds.
    private final class SlowTransaction: StoreTransaction {
        let base: any StoreTransaction

        init(_ base: any StoreTransaction) {
            self.base = base
        }

        var epoch: UInt64 { base.epoch }
        var cause: ChangeCause? {
            get { base.cause }
            set { base.cause = newValue }
        }

        func rowFeedBounds() throws -> RowFeedBounds {
            Thread.sleep(forTimeInterval: 0.02)
            return try base.rowFeedBounds()
        }

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
}
