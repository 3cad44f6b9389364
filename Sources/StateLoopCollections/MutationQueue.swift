import Foundation
import GRDB
import StateLoopSync
import StateLoopWire
import Synchronization

/// Sends the changes of every collection of a store, one at a time, in the order they were
/// made: the server's `lastMutationID` for the store's client then says which changes every
/// later answer contains. A transient failure (the network, a 5xx, an expired session) is
/// retried after the policy's backoff, for as long as it takes; only the server's refusal (any
/// other 4xx) takes a change off.
final class MutationQueue: Sendable {
    /// What the queue needs of a collection.
    struct Member: Sendable {
        var send: (@Sendable (Data, MutationID) async throws -> Void)?
        var accepted: @Sendable (UInt64) throws -> Void
        var refused: @Sendable (UInt64, MutationID, any Error) throws -> Void
    }

    private struct State {
        var members: [String: Member] = [:]
        var loop: Task<Void, Never>?
    }

    private let state = Mutex(State())
    private let signal: AsyncStream<Void>.Continuation
    private let signals: AsyncStream<Void>
    private let policy: ResourcePolicy
    private let clock: any Clock<Duration>

    init(policy: ResourcePolicy, clock: any Clock<Duration>) {
        (signals, signal) = AsyncStream.makeStream(of: Void.self, bufferingPolicy: .bufferingNewest(1))
        self.policy = policy
        self.clock = clock
    }

    deinit {
        state.withLock { $0.loop?.cancel() }
        signal.finish()
    }

    /// Adds the collection `name`, and starts sending with the first.
    func register<Row, M>(_ name: String, collection: LocalCollection<Row, M>, send: (@Sendable (M, MutationID) async throws -> Version)?) {
        var sender: (@Sendable (Data, MutationID) async throws -> Void)?
        if let send {
            sender = { data, id in try await LocalCollection<Row, M>.send(data, id: id, with: send) }
        }
        let member = Member(
            send: sender,
            accepted: { [weak collection] in try collection?.accepted($0) },
            refused: { [weak collection] in try collection?.refused($0, id: $1, error: $2) }
        )
        state.withLock { state in
            state.members[name] = member
            if state.loop == nil {
                let client = collection.store.clientID
                // The store weakly, as the queue: the loop must not keep either alive, not even
                // while it retries a change for as long as the server is away.
                let store = WeakStore(collection.store)
                state.loop = Task { [weak self, signals] in
                    var wakes = signals.makeAsyncIterator()
                    // The queue is held only while it sends: a store let go of ends the loop.
                    while !Task.isCancelled {
                        guard let sent = await Self.step(self, store, client: client) else { return }
                        // Nothing to send now: wait for a change, or a collection.
                        if !sent, await wakes.next() == nil { return }
                    }
                }
            }
        }
        wake()
    }

    /// Stops sending: a send under way is not waited for (its answer is lost, and the next
    /// opening of the store sends it again, under the same id).
    func stop() {
        state.withLock { $0.loop?.cancel() }
        signal.finish()
    }

    /// Says that a change was made or a collection opened.
    func wake() {
        signal.yield()
    }

    private static func step(_ queue: MutationQueue?, _ store: WeakStore, client: ClientID) async -> Bool? {
        guard let queue, store.store?.isClosed == false else { return nil }
        return await queue.sendNext(store, client: client)
    }

    /// Sends the oldest change not answered yet, until the server answers it; `false` when
    /// there is none, or its collection is not open (nor any after it: the order holds).
    private func sendNext(_ store: WeakStore, client: ClientID) async -> Bool {
        guard let next = try? Self.oldest(in: store) else { return false }
        let sequence = UInt64(bitPattern: next["sequence"])
        let name: String = next["collection"]
        let data: Data = next["mutation"]
        guard let member = state.withLock({ $0.members[name] }), let send = member.send else { return false }
        let id = MutationID(client: client, sequence: sequence)
        var attempt = 0
        while !Task.isCancelled {
            // Taken off meanwhile (every subscription's rows contain it): nothing to send.
            guard (try? Self.isUnanswered(sequence, in: store)) == true else { return true }
            do {
                try await Self.within(policy.requestTimeout, on: clock) { try await send(data, id) }
                // Marked here, whatever becomes of the collection (released, or its write
                // failing): a mutation the server accepted is never sent again.
                try? Self.execute("UPDATE mutations SET answered = 1 WHERE sequence = ?", sequence, in: store)
                try? member.accepted(sequence)
                return true
            } catch {
                // A stored mutation the app's type no longer decodes cannot be sent: refused,
                // rather than holding every later one back.
                let kind: FailureKind = error is DecodingError ? .unrecoverable : policy.classify(error)
                switch kind {
                case .unrecoverable:
                    try? member.refused(sequence, id, error)
                    try? Self.execute("DELETE FROM mutations WHERE sequence = ?", sequence, in: store)
                    return true
                case .transient(let retryAfter):
                    attempt += 1
                    try? await clock.sleep(for: retryAfter ?? policy.jitter(policy.backoff(beforeRetry: attempt)))
                case .unauthorized:
                    attempt += 1
                    try? await clock.sleep(for: policy.jitter(policy.backoff(beforeRetry: attempt)))
                }
            }
        }
        return true
    }

    /// `body`, given up at `timeout` on `clock` as a transient failure (`RequestTimeoutError`):
    /// a request the server never answers (a connection left half-open by a restart) must not
    /// hold the queue.
    private static func within(
        _ timeout: Duration?, on clock: any Clock<Duration>, _ body: @escaping @Sendable () async throws -> Void
    ) async throws {
        guard let timeout else { return try await body() }
        try await withThrowingTaskGroup(of: Bool.self) { group in
            group.addTask {
                try await body()
                return true
            }
            group.addTask {
                try await clock.sleep(for: timeout)
                return false
            }
            let answered = try await group.next() ?? false
            group.cancelAll()
            if !answered { throw RequestTimeoutError(timeout: timeout) }
        }
    }

    /// Runs `sql` with the argument `sequence`.
    private static func execute(_ sql: String, _ sequence: UInt64, in store: WeakStore) throws {
        try store.get().write { db in try db.execute(sql: sql, arguments: [Int64(sequence)]) }
    }

    /// The oldest change not answered yet.
    private static func oldest(in store: WeakStore) throws -> GRDB.Row? {
        try store.get().read { db in
            try GRDB.Row.fetchOne(db, sql: "SELECT sequence, collection, mutation FROM mutations WHERE answered = 0 ORDER BY sequence LIMIT 1")
        }
    }

    /// Whether the change `sequence` is still waiting for the server's answer.
    private static func isUnanswered(_ sequence: UInt64, in store: WeakStore) throws -> Bool {
        try store.get().read { db in
            try Bool.fetchOne(db, sql: "SELECT EXISTS (SELECT 1 FROM mutations WHERE sequence = ? AND answered = 0)", arguments: [Int64(sequence)])
                ?? false
        }
    }
}

/// The queue's store, held weakly: each use takes it for that use alone.
struct WeakStore: Sendable {
    weak var store: LocalStore?

    init(_ store: LocalStore) {
        self.store = store
    }

    /// The store, or ``LocalStoreClosedError`` when the app let it go.
    func get() throws -> LocalStore {
        guard let store else { throw LocalStoreClosedError() }
        return store
    }
}
