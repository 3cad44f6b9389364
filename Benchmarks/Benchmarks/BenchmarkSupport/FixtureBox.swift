import Synchronization

/// Hands a fixture built in a benchmark's `setup` to its iterations and `teardown`, which are
/// not given it.
public final class FixtureBox<Fixture: Sendable>: Sendable {
    private let fixture = Mutex<Fixture?>(nil)

    /// An empty box.
    public init() {}

    /// Keeps `value` for ``current`` and ``take()``, and returns it.
    @discardableResult
    public func set(_ value: Fixture) -> Fixture {
        fixture.withLock { $0 = value }
        return value
    }

    /// The value kept, left in the box.
    public var current: Fixture? {
        fixture.withLock { $0 }
    }

    /// The value kept, emptying the box.
    public func take() -> Fixture? {
        fixture.withLock { $0.take() }
    }
}
