import Synchronization

/// What a push route's upgrade decision found (the principal and the key), handed to the
/// socket the upgrade opens.
///
/// Hummingbird decides an upgrade in a task of its own and opens the socket in the
/// connection's task, with the same request context: this box, which the context holds, is how
/// the one hands its findings to the other, so the socket does not look its principal up again
/// before it registers.
final class UpgradeHandOver: Sendable {
    private let found = Mutex<(any Sendable)?>(nil)

    /// Keeps what the decision found.
    func keep(_ value: any Sendable) {
        found.withLock { $0 = value }
    }

    /// What the decision found, if it was of type `Value`.
    func take<Value: Sendable>(as type: Value.Type) -> Value? {
        found.withLock { value in
            defer { value = nil }
            return value as? Value
        }
    }
}
