import Synchronization

/// The result of a query on a local collection, kept up to date: ``rows`` now, and
/// ``updates()`` for every change, to a `System` through a feedback or to a screen.
///
/// It follows the collection until ``stop()``; a live query nobody stops follows it for the
/// collection's life.
public final class LiveQuery<Row: Sendable>: Sendable {
    private struct State {
        var rows = LiveRows<Row>()
        var watchers: [Int: AsyncStream<LiveRows<Row>>.Continuation] = [:]
        var next = 0
        var onStop: (@Sendable () -> Void)?
        /// Stopped: ``updates()`` gives the rows and ends at once.
        var stopped = false
    }

    private let state = Mutex(State())

    init() {}

    /// The rows now, in the query's order.
    public var rows: LiveRows<Row> {
        state.withLock { $0.rows }
    }

    /// The rows now, then again at every change; a reader that falls behind gets the newest.
    /// Once the query is stopped (or its collection or store gone), the rows as they stand and
    /// the end.
    public func updates() -> AsyncStream<LiveRows<Row>> {
        let (stream, continuation) = AsyncStream.makeStream(of: LiveRows<Row>.self, bufferingPolicy: .bufferingNewest(1))
        let id = state.withLock { state -> Int? in
            continuation.yield(state.rows)
            if state.stopped { return nil }
            state.next += 1
            state.watchers[state.next] = continuation
            return state.next
        }
        guard let id else {
            continuation.finish()
            return stream
        }
        continuation.onTermination = { [weak self] _ in self?.state.withLock { _ = $0.watchers.removeValue(forKey: id) } }
        return stream
    }

    /// Stops following the collection: the updates end, and the rows stay as they are.
    public func stop() {
        let (stop, watchers) = state.withLock { state in
            defer {
                state.onStop = nil
                state.watchers = [:]
                state.stopped = true
            }
            return (state.onStop, Array(state.watchers.values))
        }
        stop?()
        for watcher in watchers { watcher.finish() }
    }

    /// How many `updates()` streams follow it.
    var watcherCount: Int {
        state.withLock { $0.watchers.count }
    }

    var onStop: (@Sendable () -> Void)? {
        get { state.withLock { $0.onStop } }
        set { state.withLock { $0.onStop = newValue } }
    }

    /// Hands out new rows: called by the collection, under its lock, in order.
    func publish(_ rows: LiveRows<Row>) {
        state.withLock { state in
            guard !state.stopped else { return }
            state.rows = rows
            for watcher in state.watchers.values { watcher.yield(rows) }
        }
    }
}
