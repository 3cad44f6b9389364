import Dispatch
import Logging
import PostgresNIO
import Synchronization

/// One PostgreSQL connection used from a thread of the store's own, which waits for each
/// statement: how a store transaction's synchronous body (``StateLoopServer/StoreTransaction``)
/// talks to a database across the network.
///
/// The kit's transaction bodies are synchronous on purpose (an app's mutation handler reads
/// and writes values without `await`), and postgres-nio is asynchronous. Each statement runs
/// in a task on the cooperative pool while the calling thread waits on a semaphore, so the
/// calling thread must never be one of the pool's: ``PostgresStore`` calls it only from its own
/// dispatch queues, never from a task.
struct BlockingConnection: Sendable {
    let connection: PostgresConnection
    let logger: Logger

    /// Runs `query` and returns its rows, all read: a server error (a unique violation, a
    /// serialization failure) can arrive while rows are read, so they always are.
    func rows(_ query: PostgresQuery) throws -> [PostgresRow] {
        let (connection, logger) = (connection, logger)
        return try Self.wait { try await connection.query(query, logger: logger).collect() }
    }

    /// Runs a statement that returns no rows.
    func execute(_ query: PostgresQuery) throws {
        _ = try rows(query)
    }

    /// The result of `work`, run on the cooperative pool while this thread waits.
    static func wait<Value: Sendable>(_ work: @escaping @Sendable () async throws -> Value) throws -> Value {
        let done = DispatchSemaphore(value: 0)
        let outcome = Outcome<Value>()
        Task {
            do {
                outcome.set(.success(try await work()))
            } catch {
                outcome.set(.failure(error))
            }
            done.signal()
        }
        done.wait()
        return try outcome.get()
    }
}

/// The result handed from the task to the waiting thread.
private final class Outcome<Value: Sendable>: Sendable {
    private let result = Mutex<Result<Value, any Error>?>(nil)

    func set(_ value: Result<Value, any Error>) {
        result.withLock { $0 = value }
    }

    func get() throws -> Value {
        try result.withLock { $0! }.get()
    }
}
