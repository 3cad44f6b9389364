import Foundation
import Logging
import StateLoopWire
import Synchronization

/// Every socket that follows a collection's query, grouped into subscriptions (one query with
/// its parameters, for one principal), and what each commit sends them.
///
/// The store's change feed calls ``publish(_:)`` once per commit, in commit order, on its
/// writer's queue; a socket registers on that queue too (inside a store write that reads its
/// first answer), so no commit falls between a socket's first answer and its first difference.
/// Each subscription's difference is worked out once per commit from the rows' fields before
/// and after (``RowCatchUp``), encoded once per `lastMutationID`, and offered to each of its
/// sockets, whose outbox composes what a slow reader has not taken yet.
///
/// A commit that writes a resource or collection a query's access depends on
/// (``CollectionQuery/dependencies``) has the subscription's query made again, off the
/// writer's queue; its differences are held meanwhile, so that nothing is pushed under an
/// access the commit may have taken away. Refused now, the subscription's sockets get an empty
/// result and are closed; a query that reads otherwise now gets its whole new result. A query
/// with a limit is read again whole after every commit that may shift its window.
final class QueryHub: Sendable {
    /// What makes two sockets one subscription.
    struct Key: Hashable, Sendable {
        var collection: String
        var query: String
        var parameters: [String: String]
        var scope: String
    }

    /// One socket of a subscription.
    struct Socket: Sendable {
        let writer: PushSocketWriter
        let client: ClientID?
        var lastMutationID: UInt64?
    }

    /// One query for one principal, and its sockets.
    struct Subscription: Sendable {
        let collection: String
        var query: RowQuery
        /// Whether the principal may read a row with these fields.
        let readable: @Sendable ([String: FieldValue]) -> Bool
        /// The query made again for the principal, in a read of the store; `nil`: refused.
        let resolve: @Sendable (any StoreTransaction) throws -> RowQuery?
        /// The resources and collections whose writes make the query again.
        let dependencies: Set<String>
        var sockets: [Int: Socket] = [:]
        /// The commits held while the query is made again; `nil` when it is not.
        var held: [Commit]?
        /// Where the subscription's latest message stands (its cookie): what a message that
        /// changes no row, only `lastMutationID`, is positioned at.
        var cookie: CollectionCookie?

        /// Whether `commit` may change which rows a query with a limit selects: it changed a
        /// row that meets the query's conditions, before or after. A window's difference cannot
        /// be worked out from the changed rows alone (a row leaving it lets the next one in), so
        /// the result is read again whole.
        /// Moves each socket's `lastMutationID` on by `progress`.
        /// Returns the sockets whose `lastMutationID` moved.
        @discardableResult
        mutating func take(_ progress: [ClientProgressKey: UInt64], scope: String) -> Set<Int> {
            var moved: Set<Int> = []
            guard !progress.isEmpty else { return moved }
            for (id, socket) in sockets {
                guard let client = socket.client, let newest = progress[ClientProgressKey(scope: scope, client: client)],
                    newest > socket.lastMutationID ?? 0
                else { continue }
                sockets[id]?.lastMutationID = newest
                moved.insert(id)
            }
            return moved
        }

        func shiftsWindow(_ commit: Commit) -> Bool {
            query.limit != nil && commit.rows.contains { change in [change.before, change.after].contains { $0.map(query.matches) == true } }
        }
    }

    /// What a subscription learns from one commit.
    struct Commit: Sendable {
        var position: UInt64
        var rows: [RowChange]
        /// The resources and collections it wrote.
        var touched: Set<String>
        /// The clients whose processed mutations it moved on, with their newest: applied to
        /// the sockets when the commit is sent, never before its rows.
        var progress: [ClientProgressKey: UInt64] = [:]
    }

    private struct State {
        var subscriptions: [Key: Subscription] = [:]
        /// Each socket's subscription.
        var keyOfSocket: [Int: Key] = [:]
    }

    private let state = Mutex(State())
    private let store: any ServerStore
    /// A difference larger than this is not pushed: its sockets are sent a hint, and their
    /// readers catch up from their cookies.
    private let maximumPushBytes: Int
    private let logger: Logger

    init(store: any ServerStore, maximumPushBytes: Int, logger: Logger) {
        self.store = store
        self.maximumPushBytes = maximumPushBytes
        self.logger = logger
    }

    /// Adds socket `id` to the subscription `key` (made with `subscription` if it is new), and
    /// offers it `first`. On the store's writer queue, inside the write that read `first`.
    func register(id: Int, socket: Socket, key: Key, subscription: @autoclosure () -> Subscription, first: RowsPush) {
        state.withLock { state in
            state.subscriptions[key, default: subscription()].sockets[id] = socket
            state.keyOfSocket[id] = key
            if (state.subscriptions[key]!.cookie?.position ?? 0) <= first.cookie.position { state.subscriptions[key]!.cookie = first.cookie }
            // While the query is made again, the first answer is as good as any held commit:
            // the socket then gets what the subscription's other sockets get.
            _ = socket.writer.offer(Self.entry(first, collection: key.collection))
        }
    }

    /// Removes socket `id`, and its subscription with its last socket.
    func unregister(_ id: Int) {
        state.withLock { state in
            guard let key = state.keyOfSocket.removeValue(forKey: id) else { return }
            state.subscriptions[key]?.sockets[id] = nil
            if state.subscriptions[key]?.sockets.isEmpty == true { state.subscriptions[key] = nil }
        }
    }

    /// Sends one commit's differences. Called in commit order.
    func publish(_ changes: CommittedChanges) {
        let touched = Set(changes.values.map(\.key.resource) + changes.rows.map(\.key.resource))
        let progress = Dictionary(changes.progress.map { (ClientProgressKey(scope: $0.scope, client: $0.client), $0.lastMutationID) }) {
            max($0, $1)
        }
        let rowsByCollection = Dictionary(grouping: changes.rows, by: \.key.resource)
        var rechecks: [Key] = []
        state.withLock { state in
            for key in state.subscriptions.keys {
                var subscription = state.subscriptions[key]!
                guard let position = changes.feed?.upperBound else {
                    // Progress alone: after the commits held, if any.
                    if let last = subscription.held?.last {
                        subscription.held!.append(Commit(position: last.position, rows: [], touched: [], progress: progress))
                    } else {
                        // A mutation that wrote nothing (a value written as it was): its client
                        // learns that it is in all the same, at the position its sockets stand.
                        let moved = subscription.take(progress, scope: key.scope)
                        if !moved.isEmpty, let cookie = subscription.cookie {
                            send(RowsPush(cookie: cookie, replace: false, rows: [], removed: [], lastMutationID: nil), to: subscription, only: moved)
                        }
                    }
                    state.subscriptions[key] = subscription
                    continue
                }
                let commit = Commit(
                    position: position, rows: rowsByCollection[subscription.collection] ?? [], touched: touched,
                    progress: progress)
                if subscription.held != nil {
                    subscription.held!.append(commit)
                } else if !subscription.dependencies.isDisjoint(with: touched) || subscription.shiftsWindow(commit) {
                    subscription.held = [commit]
                    rechecks.append(key)
                } else {
                    send(commit, to: &subscription, scope: key.scope)
                }
                state.subscriptions[key] = subscription
            }
        }
        for key in rechecks { recheck(key) }
    }

    /// What making a query again found, at the feed's position `position`: the query (`nil`:
    /// refused), and its whole result when it must be sent whole (a query made otherwise, or a
    /// window).
    private struct Recheck: Sendable {
        var query: RowQuery?
        var whole: RowsPush?
        var position: UInt64
    }

    /// Makes the query of `key` again, off the writer's queue, and sends what was held.
    private func recheck(_ key: Key) {
        guard let subscription = state.withLock({ $0.subscriptions[key] }) else { return }
        Task { [store] in
            let outcome: Result<Recheck, any Error>
            do {
                outcome = .success(
                    try await store.read { transaction in
                        let position = try transaction.rowFeedBounds().newest
                        guard let query = try subscription.resolve(transaction) else { return Recheck(position: position) }
                        guard query != subscription.query || query.limit != nil else { return Recheck(query: query, position: position) }
                        let whole = try RowsPush.whole(
                            of: subscription.collection, matching: query, in: transaction, readable: subscription.readable, newest: position)
                        return Recheck(query: query, whole: whole, position: position)
                    })
            } catch {
                outcome = .failure(error)
            }
            self.finishRecheck(key, outcome)
        }
    }

    private func finishRecheck(_ key: Key, _ outcome: Result<Recheck, any Error>) {
        var again = false
        state.withLock { state in
            guard var subscription = state.subscriptions[key], let held = subscription.held else { return }
            let found: Recheck
            switch outcome {
            case .failure(let error):
                logger.warning("a query's access could not be checked: its sockets are closed", metadata: ["error": "\(error)"])
                Self.end(subscription, .storeUnavailable, in: &state)
                return
            case .success(let recheck):
                found = recheck
            }
            guard let query = found.query else {
                // Refused now: the reader learns that it holds nothing, then why.
                let position = max(found.position, held.last!.position)
                let empty = RowsPush(
                    cookie: CollectionCookie(epoch: store.epoch, position: position, of: subscription.query), replace: true, rows: [],
                    removed: [], lastMutationID: nil)
                for socket in subscription.sockets.values { _ = socket.writer.offer(Self.entry(empty, collection: key.collection)) }
                Self.end(subscription, .accessRevoked, in: &state)
                return
            }
            var pending = held
            if let whole = found.whole {
                subscription.query = query
                subscription.cookie = whole.cookie
                // The whole result holds every commit up to its read, their mutations too.
                for commit in pending where commit.position <= whole.cookie.position { subscription.take(commit.progress, scope: key.scope) }
                send(whole, to: subscription)
                pending.removeAll { $0.position <= whole.cookie.position }
            }
            // What was committed up to the read stands as read; a later commit may have changed
            // the access again, or a window, and is held for another look.
            let later = pending.firstIndex {
                $0.position > found.position && (!subscription.dependencies.isDisjoint(with: $0.touched) || subscription.shiftsWindow($0))
            }
            for commit in pending[..<(later ?? pending.endIndex)] { send(commit, to: &subscription, scope: key.scope) }
            again = later != nil
            subscription.held = later.map { Array(pending[$0...]) }
            state.subscriptions[key] = subscription
        }
        if again { recheck(key) }
    }

    /// Closes every socket of `subscription` once what waits is sent, and forgets it.
    private static func end(_ subscription: Subscription, _ ending: PushSocketWriter.Ending, in state: inout State) {
        for (id, socket) in subscription.sockets {
            socket.writer.close(ending)
            if let key = state.keyOfSocket.removeValue(forKey: id) { state.subscriptions[key] = nil }
        }
    }

    /// Offers the difference `commit` makes to `subscription`, if any, after moving its
    /// sockets' `lastMutationID` on by the commit's progress. A socket whose `lastMutationID`
    /// moved is sent an empty difference when the result did not change: its client learns on
    /// every subscription that its mutation is in, and may stop showing it on top of rows that
    /// no other message would confirm.
    private func send(_ commit: Commit, to subscription: inout Subscription, scope: String) {
        let moved = subscription.take(commit.progress, scope: scope)
        let (rows, removed) =
            commit.rows.isEmpty ? ([], []) : RowCatchUp.difference(of: commit.rows, query: subscription.query, readable: subscription.readable)
        let cookie = CollectionCookie(epoch: commit.rows.first?.version.epoch ?? store.epoch, position: commit.position, of: subscription.query)
        subscription.cookie = cookie
        let difference = RowsPush(
            cookie: cookie,
            replace: false, rows: rows.map { RowsPush.Sent(id: $0.key.id, version: $0.version, json: $0.json!) }, removed: removed,
            lastMutationID: nil)
        if !rows.isEmpty || !removed.isEmpty {
            send(difference, to: subscription)
        } else {
            if !moved.isEmpty { send(difference, to: subscription, only: moved) }
        }
    }

    /// Offers `difference` to every socket of `subscription` (or those of `only`), encoded once
    /// per `lastMutationID` (a difference over the push limit is left to each writer, which
    /// sends a hint).
    private func send(_ difference: RowsPush, to subscription: Subscription, only: Set<Int>? = nil) {
        var encoded: [UInt64?: EncodedPush?] = [:]
        for (id, socket) in subscription.sockets where only?.contains(id) ?? true {
            var own = difference
            own.lastMutationID = socket.lastMutationID
            var entry = Self.entry(own, collection: subscription.collection)
            if encoded[socket.lastMutationID] == nil {
                let message = own.message
                let fits = message.count <= maximumPushBytes || own.isUnlimited
                encoded[socket.lastMutationID] = .some(fits ? EncodedPush(text: String(decoding: message, as: UTF8.self)) : nil)
            }
            entry.encoded = encoded[socket.lastMutationID] ?? nil
            _ = socket.writer.offer(entry)
        }
    }

    /// An outbox entry for `push`, positioned by its cookie.
    static func entry(_ push: RowsPush, collection: String) -> PushOutbox.Entry {
        PushOutbox.Entry(
            value: StoredValue(
                key: ResourceKey(resource: collection, id: ""), version: Version(epoch: push.cookie.epoch, counter: push.cookie.position),
                json: Data()),
            lastMutationID: push.lastMutationID, rows: push)
    }
}
