import Foundation
import Logging
import NIOCore
import NIOPosix
import PostgresNIO
import StateLoopServer
import StateLoopWire
import Synchronization

/// Hands every commit in the database's change feed, whichever instance made it, to a
/// ``PostgresStore``'s commit observers: each once, in feed order, which is commit order (see
/// ``PostgresTransaction/seal()``), so each key's versions arrive in order.
///
/// It remembers one number, the feed position it has handed over through, and reads the
/// table after it: never from memory what another instance committed, so an instance that
/// missed notifications (its listening connection dropped) catches up by reading. Its own
/// store's commits skip the read when they are the next in the feed, the usual case on one
/// instance.
///
/// Threading: all its work runs on one thread of its own, in the order it was asked for; a
/// catch-up reads on a connection of its own.
final class FeedFollower: Sendable {
    /// A commit of this follower's own store, just committed.
    struct OwnCommit: Sendable {
        var changes: CommittedChanges
        /// The positions of its first and last entries.
        var first: UInt64
        var last: UInt64
    }

    private struct State {
        var position: UInt64
        var connection: BlockingConnection?
        var catchUpQueued = false
    }

    private let thread = StoreThreads(count: 1)
    private let state: Mutex<State>
    private let configuration: PostgresConnection.Configuration
    private let epoch: UInt64
    private let logger: Logger
    private let observers = Mutex<[@Sendable (CommittedChanges) -> Void]>([])
    /// The most rows a catch-up reads at once; a commit with more is read whole.
    private let pageSize: Int
    private let deadline: Duration

    /// A follower that hands over the commits after `position` to its observers.
    init(
        after position: UInt64, configuration: PostgresConnection.Configuration, epoch: UInt64, deadline: Duration, logger: Logger,
        pageSize: Int = 500
    ) {
        state = Mutex(State(position: position))
        self.configuration = configuration
        self.epoch = epoch
        self.logger = logger
        self.pageSize = pageSize
        self.deadline = deadline
    }

    deinit {
        close()
    }

    /// Closes its connection; a later catch-up would open another.
    func close() {
        state.withLock { state in
            state.connection?.close()
            state.connection = nil
        }
    }

    /// Adds an observer of every commit handed over from now on.
    func observe(_ observer: @escaping @Sendable (CommittedChanges) -> Void) {
        observers.withLock { $0.append(observer) }
    }

    /// The feed position handed over through.
    var position: UInt64 {
        state.withLock { $0.position }
    }

    /// Hands over the store's own commit, after any commit before it; the future completes
    /// once the observers have it (or the catch-up that should have brought it failed).
    func handOver(_ own: OwnCommit) -> EventLoopFuture<Void> {
        let promise = MultiThreadedEventLoopGroup.singleton.any().makePromise(of: Void.self)
        thread.submit { [self] in
            let position = self.position
            if position + 1 == own.first {
                handOver([own.changes], through: own.last)
            } else if position < own.last {
                catchUp()
            }
            promise.succeed()
        }
        return promise.futureResult
    }

    /// Reads the feed after the position and hands over what it finds, soon; calls made while
    /// one is waiting to run add nothing.
    func catchUpSoon() {
        let queue = state.withLock { state in
            defer { state.catchUpQueued = true }
            return !state.catchUpQueued
        }
        guard queue else { return }
        thread.submit { [self] in
            state.withLock { $0.catchUpQueued = false }
            catchUp()
        }
    }

    /// Reads and hands over every commit after the position, a page at a time. A failure
    /// leaves the position where the last complete page put it: the next catch-up (the
    /// listener asks for one when its connection is back) goes on from there.
    private func catchUp() {
        var limit = pageSize
        while true {
            do {
                let page = try read(after: position, limit: limit)
                switch page.reading {
                case .nothing:
                    return
                case .needsLargerPage:
                    limit *= 4
                case .commits(let commits, let through):
                    handOver(commits, through: through)
                    if !page.isFull { return }
                    limit = pageSize
                }
            } catch {
                logger.warning(
                    "reading the change feed failed; it is read again on the next commit or notification",
                    metadata: ["error": "\(String(reflecting: error))"])
                state.withLock { state in
                    state.connection?.close()
                    state.connection = nil
                }
                return
            }
        }
    }

    private func handOver(_ commits: [CommittedChanges], through: UInt64) {
        let observers = observers.withLock { $0 }
        for commit in commits where !commit.isEmpty {
            for observer in observers { observer(commit) }
        }
        state.withLock { $0.position = through }
    }

    /// Up to `limit` rows after `position`, values and progress together, in one statement
    /// (so in one snapshot).
    private func read(after position: UInt64, limit: Int) throws -> FeedPage {
        let connection = try opened()
        let after = Int64(clamping: position)
        let rows = try connection.rows(
            """
            SELECT seq, commit_seq, committed_at, resource, id, counter, json, scope, mutation, NULL::TEXT, NULL::TEXT, NULL::BIGINT, row_fields
            FROM stateloop_changes WHERE seq > \(after)
            UNION ALL
            SELECT commit_seq, commit_seq, committed_at, NULL, NULL, NULL, NULL, cause_scope, cause_mutation, scope, client, last_sequence, NULL
            FROM stateloop_progress WHERE commit_seq > \(after)
            ORDER BY 2, 1 LIMIT \(limit)
            """)
        return FeedPage(rows: try rows.map(row(from:)), isFull: rows.count >= limit)
    }

    private func row(from row: PostgresRow) throws -> FeedPage.Row {
        let (position, commit, time, resource, id, counter, json, causeScope, mutation, scope, client, sequence, rowFields) = try row.decode(
            (Int64, Int64, Int64, String?, String?, Int64?, Data?, String?, String?, String?, String?, Int64?, String?).self
        )
        var read = FeedPage.Row(position: UInt64(position), commit: UInt64(commit), time: StoreClock.date(microseconds: time))
        read.rowFields = rowFields
        if let causeScope, let mutation { read.cause = ChangeCause(scope: causeScope, mutation: MutationID(rawValue: mutation)) }
        if let resource, let id, let counter, let json {
            read.value = StoredValue(
                key: ResourceKey(resource: resource, id: id), version: Version(epoch: epoch, counter: UInt64(counter)), json: json)
        }
        if let scope, let client, let sequence {
            read.progress = ClientProgress(scope: scope, client: ClientID(rawValue: client), lastMutationID: UInt64(bitPattern: sequence))
        }
        return read
    }

    private func opened() throws -> BlockingConnection {
        if let open = state.withLock({ $0.connection }), !open.connection.isClosed { return open }
        let connection = try BlockingConnection.open(configuration, deadline: deadline, logger: logger)
        state.withLock { $0.connection = connection }
        return connection
    }
}
