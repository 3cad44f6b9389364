import Foundation
import StateLoopServer
import StateLoopWire
import Synchronization

/// A store whose next commit fails after the transaction's body ran, as a full disk or a lost
/// database connection would make it fail.
final class FlakyStore: ServerStore {
    private let base: any ServerStore
    private let failing = Mutex(false)

    init(_ base: any ServerStore) {
        self.base = base
    }

    func failNextCommit() {
        failing.withLock { $0 = true }
    }

    var epoch: UInt64 { base.epoch }

    func write<Result: Sendable>(_ body: @Sendable (any StoreTransaction) throws -> Result) async throws -> Result {
        let fails = failing.withLock { state in
            defer { state = false }
            return state
        }
        return try await base.write { transaction in
            let result = try body(transaction)
            if fails { throw CommitFailed() }
            return result
        }
    }

    func read<Result: Sendable>(_ body: @Sendable (any StoreTransaction) throws -> Result) async throws -> Result {
        try await base.read(body)
    }

    func read(_ key: ResourceKey, lastMutationIDOf client: ClientID?, scope: String) async throws -> (value: StoredValue?, lastMutationID: UInt64?) {
        try await base.read(key, lastMutationIDOf: client, scope: scope)
    }

    func forgetClients(idleSince cutoff: Date) async throws -> Int {
        try await base.forgetClients(idleSince: cutoff)
    }

    func observeCommits(_ observer: @escaping @Sendable (CommittedChanges) -> Void) {
        base.observeCommits(observer)
    }

    func changes(after sequence: UInt64, limit: Int) async throws -> [StoredChange] {
        try await base.changes(after: sequence, limit: limit)
    }

    func forgetChanges(committedBefore cutoff: Date) async throws -> Int {
        try await base.forgetChanges(committedBefore: cutoff)
    }

    struct CommitFailed: Error {}
}
