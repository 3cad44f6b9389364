import StateLoopSync

/// What the client shows of one backend-owned value: the visible value (optimistic mutations
/// included), the confirmed version behind it, and the resource's health. Codable, so that the
/// journal restores the last screen at once after a relaunch.
public struct ResourceView<Value: Codable & Sendable & Equatable>: Codable, Sendable, Equatable {
    /// The value shown: the server's newest with the pending mutations on top.
    public var value: Value?
    /// The server's version behind `value`.
    public var confirmedVersion: Version?
    /// Mutations sent or waiting, not yet in the confirmed value.
    public var pendingMutations = 0
    /// How the resource is doing.
    public var health = ResourceHealth()

    /// Nothing known yet.
    public init() {}

    /// The optimistic resource's latest: an unknown value (nothing confirmed yet, as right after
    /// a relaunch) keeps the last known one, which the journal restored.
    mutating func apply(value: Value?, confirmedVersion: Version?, pendingMutations: Int, health: ResourceHealth) {
        if let value {
            self.value = value
            self.confirmedVersion = confirmedVersion
        }
        self.pendingMutations = pendingMutations
        self.health = health
    }
}

/// The health of a remote resource, for the status line.
public struct ResourceHealth: Codable, Sendable, Equatable {
    /// A request is in flight with nothing to show yet.
    public var isLoading = false
    /// The request in flight is taking longer than expected.
    public var isSlow = false
    /// The push channel is down.
    public var isOffline = false
    /// The last failure, until a success.
    public var failure: String?
    /// The server no longer accepts the session (it restarted, forgot or expired the token):
    /// the user must sign in again.
    public var isSignedOut = false

    /// All well.
    public init(isLoading: Bool = false, isSlow: Bool = false, isOffline: Bool = false, failure: String? = nil, isSignedOut: Bool = false) {
        self.isLoading = isLoading
        self.isSlow = isSlow
        self.isOffline = isOffline
        self.failure = failure
        self.isSignedOut = isSignedOut
    }

    /// The health of a resource status. A refused session is `isSignedOut`, not a failure.
    public init<V>(_ status: ResourceStatus<V>) {
        self.init(
            isLoading: status.isLoading,
            isSlow: status.isSlow,
            isOffline: status.isOffline,
            failure: status.isUnauthorized ? nil : status.failure?.message,
            isSignedOut: status.isUnauthorized
        )
    }
}
