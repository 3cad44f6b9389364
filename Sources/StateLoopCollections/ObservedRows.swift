import Observation

/// A live query's rows as an `Observable` on the main actor, for SwiftUI and anything else built
/// on the Observation framework: a view that reads ``rows`` is redrawn when they change.
///
/// Made by ``LiveQuery/observed()``. It follows the query until ``stop()`` or until it is
/// released; the rows are set on the main actor, in the order the query delivered them, and a
/// screen that falls behind gets the newest.
@MainActor
public final class ObservedRows<Row: Sendable>: Observable {
    private let registrar = ObservationRegistrar()
    private var storage: LiveRows<Row>
    /// The task that sets the rows; cancelled when this is released, which a task holding it
    /// weakly would only notice at the next change.
    private let following = Locked<Task<Void, Never>?>(nil)

    init(_ query: LiveQuery<Row>) {
        storage = query.rows
        following.value = Task { [weak self] in
            for await rows in query.updates() {
                // Stopped (on the main actor, as this runs): a value the stream handed over
                // before the stop took effect is not set; "the rows stay as they are" holds
                // however the stop and a change interleave.
                guard let self, !Task.isCancelled else { return }
                self.set(rows)
            }
        }
    }

    deinit {
        following.value?.cancel()
    }

    /// The rows now, in the query's order. Reading them registers interest in their changes.
    public var rows: LiveRows<Row> {
        registrar.access(self, keyPath: \.rows)
        return storage
    }

    /// Stops following the query: the rows stay as they are. The query itself goes on until
    /// stopped (``LiveQuery/stop()``).
    public func stop() {
        following.value?.cancel()
    }

    private func set(_ rows: LiveRows<Row>) {
        registrar.withMutation(of: self, keyPath: \.rows) { storage = rows }
    }
}

extension LiveQuery {
    /// The rows as an `Observable` on the main actor, for SwiftUI: see ``ObservedRows``.
    @MainActor
    public func observed() -> ObservedRows<Row> {
        ObservedRows(self)
    }
}
