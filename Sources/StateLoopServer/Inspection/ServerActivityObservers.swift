import Synchronization

/// Who watches a ``SyncServer``'s activity: handlers called synchronously, on the thread that
/// did the work, so each must be quick (an inspector's keeps a record in its buffer).
///
/// Unwatched, a report costs one atomic load: the activity is built only while a handler is
/// registered (``report(_:)`` takes it as an autoclosure).
package final class ServerActivityObservers: Sendable {
    private let handlers = Mutex<[UInt64: @Sendable (ServerActivity) -> Void]>([:])
    private let count = Atomic<Int>(0)
    private let lastID = Atomic<UInt64>(0)

    package init() {}

    /// Whether anyone watches: the sites that gather what a report needs ask first.
    package var isWatched: Bool {
        count.load(ordering: .relaxed) > 0
    }

    /// Registers `handler`; ``remove(_:)`` takes the id returned.
    package func add(_ handler: @escaping @Sendable (ServerActivity) -> Void) -> UInt64 {
        let id = lastID.add(1, ordering: .relaxed).newValue
        handlers.withLock { handlers in
            handlers[id] = handler
            count.store(handlers.count, ordering: .relaxed)
        }
        return id
    }

    package func remove(_ id: UInt64) {
        handlers.withLock { handlers in
            handlers[id] = nil
            count.store(handlers.count, ordering: .relaxed)
        }
    }

    /// Hands the activity to every handler, building it only when there is one.
    package func report(_ activity: @autoclosure () -> ServerActivity) {
        guard isWatched else { return }
        let current = handlers.withLock { Array($0.values) }
        guard !current.isEmpty else { return }
        let built = activity()
        for handler in current { handler(built) }
    }
}
