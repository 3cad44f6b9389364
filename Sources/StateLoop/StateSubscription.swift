/// Keeps an observer of a ``System`` registered. Cancel it, or release it, to stop observing.
public final class StateSubscription {
    private var onCancel: (() -> Void)?

    init(onCancel: @escaping () -> Void) {
        self.onCancel = onCancel
    }

    /// Stops the observer. Calling it again does nothing.
    public func cancel() {
        let action = onCancel
        onCancel = nil
        action?()
    }

    deinit {
        onCancel?()
    }
}
