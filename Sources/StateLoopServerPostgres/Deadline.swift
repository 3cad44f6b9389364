import NIOCore
import NIOPosix
import Synchronization

/// A wait for an asynchronous operation that gives up at a deadline, so that a request never
/// waits longer than the store's deadline for a database that stopped answering.
enum Deadline {
    /// The result of `operation`, or ``PostgresStore/Unanswered`` once `limit` passed first.
    ///
    /// The operation is not awaited past the deadline: it is cancelled and left to end by
    /// itself (postgres-nio gives up a connection lease when cancelled; a statement on a
    /// connection ends when the connection does). At the deadline `giveUp` decides: `false`
    /// waits on for the operation (a write already running, whose outcome the caller must
    /// learn, and whose statements have deadlines of their own).
    static func race<Value: Sendable>(
        _ limit: Duration, giveUp: @escaping @Sendable () -> Bool = { true },
        _ operation: @escaping @Sendable () async throws -> Value
    ) async throws -> Value {
        try await withCheckedThrowingContinuation { (continuation: CheckedContinuation<Value, any Error>) in
            let race = Mutex<Race<Value>>(Race(waiting: continuation))
            let work = Task {
                let result: Result<Value, any Error>
                do {
                    result = .success(try await operation())
                } catch {
                    result = .failure(error)
                }
                let (waiting, timer) = race.withLock { race in (race.waiting.take(), race.timer.take()) }
                timer?.cancel()
                waiting?.resume(with: result)
            }
            let timer = MultiThreadedEventLoopGroup.singleton.any().scheduleTask(in: .nanoseconds(Int64(limit / .nanoseconds(1)))) {
                guard giveUp(), let waiting = race.withLock({ $0.waiting.take() }) else { return }
                work.cancel()
                waiting.resume(throwing: PostgresStore.Unanswered(waited: limit))
            }
            let finished = race.withLock { race in
                if race.waiting == nil { return true }
                race.timer = timer
                return false
            }
            if finished { timer.cancel() }
        }
    }

    private struct Race<Value: Sendable> {
        var waiting: CheckedContinuation<Value, any Error>?
        var timer: Scheduled<Void>?
    }
}
