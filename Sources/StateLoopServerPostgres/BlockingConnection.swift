import Dispatch
import Logging
import NIOCore
import NIOPosix
import PostgresNIO

/// One PostgreSQL connection used from a thread of the store's own, which waits for each
/// statement: how a store transaction's synchronous body (``StateLoopServer/StoreTransaction``)
/// talks to a database across the network.
///
/// The kit's transaction bodies are synchronous on purpose (an app's mutation handler reads
/// and writes values without `await`), and postgres-nio is asynchronous. Each statement is
/// sent through postgres-nio's future API and the calling thread waits for the future: the
/// connection's event loop does the work, and no task of the cooperative pool is involved, so
/// however many threads wait, the pool never runs short. The calling thread must be one of
/// the store's ``StoreThreads``: never an event loop's (NIO traps) nor the cooperative pool's.
struct BlockingConnection: Sendable {
    let connection: PostgresConnection
    let logger: Logger
    /// The longest wait for one statement's answer; past it the connection is closed (a
    /// database that stopped answering does not answer later) and the statement throws.
    let deadline: Duration

    /// Runs `query` and returns its rows, all read: a server error (a unique violation, a
    /// serialization failure) can arrive while rows are read, so they always are.
    ///
    /// - Throws: ``PostgresStore/Unanswered`` past the deadline; postgres-nio's errors.
    func rows(_ query: PostgresQuery) throws -> [PostgresRow] {
        // A query written to a closed channel is dropped, and its future never completes.
        guard !connection.isClosed else { throw PostgresStore.Unanswered(waited: .zero) }
        let answer = connection.query(query, logger: logger)
        let answered = DispatchSemaphore(value: 0)
        answer.whenComplete { _ in answered.signal() }
        guard answered.wait(timeout: .now() + .nanoseconds(Int(deadline / .nanoseconds(1)))) == .success else {
            close()
            throw PostgresStore.Unanswered(waited: deadline)
        }
        return try answer.wait().rows
    }

    /// Runs a statement whose rows do not matter.
    func execute(_ query: PostgresQuery) throws {
        _ = try rows(query)
    }

    /// Opens a connection with `configuration` and waits for it (postgres-nio's connect
    /// timeout bounds the wait). The server ends its statements at the deadline too
    /// (`statement_timeout`), so one this side gave up on releases its locks there.
    static func open(_ configuration: PostgresConnection.Configuration, deadline: Duration, logger: Logger) throws -> BlockingConnection {
        let opened = try PostgresConnection.connect(
            on: MultiThreadedEventLoopGroup.singleton.any(), configuration: configuration, id: 0, logger: logger
        ).wait()
        let connection = BlockingConnection(connection: opened, logger: logger, deadline: deadline)
        do {
            let milliseconds = max(1, Int(deadline / .milliseconds(1)))
            try connection.execute(PostgresQuery(unsafeSQL: "SET statement_timeout = \(milliseconds)"))
        } catch {
            connection.close()
            throw error
        }
        return connection
    }

    /// Closes the connection without waiting; it lives until it is closed (postgres-nio
    /// asserts that a connection is never released open).
    func close() {
        let connection = connection
        connection.close().whenComplete { _ in withExtendedLifetime(connection) {} }
    }
}

/// Threads of a store's own, for work that waits on the database (``BlockingConnection``).
///
/// Dispatch queues would do the same on Apple platforms; on Linux a dispatch queue's blocked
/// threads come from the pool the concurrency runtime's executor uses too, and a suite that
/// blocked many of them at once stalled. These are plain threads (`NIOThreadPool`), as many
/// as asked for and no more.
final class StoreThreads: Sendable {
    private let pool: NIOThreadPool

    /// Starts `count` threads; one thread runs the work it is given in order.
    init(count: Int) {
        pool = NIOThreadPool(numberOfThreads: max(1, count))
        pool.start()
    }

    deinit {
        pool.shutdownGracefully { _ in }
    }

    /// Runs `work` on one of the threads and waits for it without holding a thread of the
    /// cooperative pool.
    ///
    /// `work` reaches the thread through a box it is taken out of before the waiting task
    /// resumes: callers pass a transaction body through `withoutActuallyEscaping`, which traps
    /// if anything (the submitted block, still finishing) holds it by then.
    func run<Value: Sendable>(_ work: @escaping @Sendable () throws -> Value) async throws -> Value {
        let box = WorkBox(work)
        // Let go of the work even if the pool never ran it (it was shutting down).
        defer { _ = box.abandon() }
        return try await pool.runIfActive {
            guard let work = box.take() else { throw CancellationError() }
            return try work()
        }
    }

    /// Runs `work` as ``run(_:)`` does, unless it is still queued after `deadline`: it then
    /// never runs, and its caller is told so. Work that started is waited for (each of its
    /// statements has a deadline of its own), so a write's caller always learns its outcome.
    ///
    /// - Throws: ``PostgresStore/Unanswered`` if the work was still queued at the deadline.
    func run<Value: Sendable>(within deadline: Duration, _ work: @escaping @Sendable () throws -> Value) async throws -> Value {
        let box = WorkBox(work)
        defer { _ = box.abandon() }
        return try await Deadline.race(deadline, giveUp: { box.abandon() }) {
            try await self.pool.runIfActive {
                guard let work = box.take() else { throw PostgresStore.Unanswered(waited: deadline) }
                return try work()
            }
        }
    }

    /// Runs `work` on one of the threads and does not wait.
    func submit(_ work: @escaping @Sendable () -> Void) {
        pool.submit { state in
            if case .active = state { work() }
        }
    }
}
