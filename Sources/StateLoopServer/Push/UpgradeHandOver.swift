import Synchronization

/// A value handed from one step of a push upgrade to the next: what a push route granted (the
/// principal and the key) to the socket it opens, and the upgrade's decision from NIO's check
/// to the pipeline's change or the refusal's answer.
///
/// The steps run at different times on different tasks and threads, with nothing else to carry
/// a value between them: the request context (for the route) and the connection's setup (for
/// the decision) each hold one of these boxes.
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
