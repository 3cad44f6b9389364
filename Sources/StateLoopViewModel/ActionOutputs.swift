/// An action together with the state right after one of its reducers, or after it completed.
public struct ActionUpdate<Action: Sendable, State: Sendable>: Sendable {
    /// The action that was sent.
    public let action: Action
    /// The state at that moment.
    public let state: State
}

/// An action that failed, with its error.
public struct ActionFailure<Action: Sendable>: Sendable {
    /// The action that was sent.
    public let action: Action
    /// What its work threw.
    public let error: any Error
}
