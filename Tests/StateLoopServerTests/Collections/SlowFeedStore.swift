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
    private final class SlowTransaction: ForwardingTransaction {
        override func rowFeedBounds() throws -> RowFeedBounds {
            Thread.sleep(forTimeInterval: 0.02)
            return try base.rowFeedBounds()
        }
    }
}
