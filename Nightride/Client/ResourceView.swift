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
    /// The user's changes the server has not accepted that are waiting to be sent (the server
    /// away, or a retry's backoff): kept, and sent once the server can be reached.
    public var waitingToSend = 0
    /// The user's changes held past the app's maximum age, unsent.
    public var couldNotSend = 0

    /// All well.
    public init(
        isLoading: Bool = false, isSlow: Bool = false, isOffline: Bool = false, failure: String? = nil, isSignedOut: Bool = false,
        waitingToSend: Int = 0, couldNotSend: Int = 0
    ) {
        self.isLoading = isLoading
        self.isSlow = isSlow
        self.isOffline = isOffline
        self.failure = failure
        self.isSignedOut = isSignedOut
        self.waitingToSend = waitingToSend
        self.couldNotSend = couldNotSend
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

    /// The health of an optimistic resource's status: its resource's, and where its unsent
    /// changes stand.
    public init<M>(_ status: OptimisticStatus<M>) {
        self.init(status.resource)
        switch status.delivery {
        case .idle, .sending: break
        case .waiting(let count, _): waitingToSend = count
        case .couldNotSend(let count): couldNotSend = count
        }
    }

    private enum CodingKeys: String, CodingKey {
        case isLoading, isSlow, isOffline, failure, isSignedOut, waitingToSend, couldNotSend
    }

    /// Encodes a health; the unsent counts only when not zero, so that a health encodes as it
    /// did before they existed (recorded sessions compare encodings).
    public func encode(to encoder: any Encoder) throws {
        var container = encoder.container(keyedBy: CodingKeys.self)
        try container.encode(isLoading, forKey: .isLoading)
        try container.encode(isSlow, forKey: .isSlow)
        try container.encode(isOffline, forKey: .isOffline)
        try container.encodeIfPresent(failure, forKey: .failure)
        try container.encode(isSignedOut, forKey: .isSignedOut)
        if waitingToSend != 0 { try container.encode(waitingToSend, forKey: .waitingToSend) }
        if couldNotSend != 0 { try container.encode(couldNotSend, forKey: .couldNotSend) }
    }

    /// Decodes a health, journals written before the unsent counts included.
    public init(from decoder: any Decoder) throws {
        let container = try decoder.container(keyedBy: CodingKeys.self)
        isLoading = try container.decodeIfPresent(Bool.self, forKey: .isLoading) ?? false
        isSlow = try container.decodeIfPresent(Bool.self, forKey: .isSlow) ?? false
        isOffline = try container.decodeIfPresent(Bool.self, forKey: .isOffline) ?? false
        failure = try container.decodeIfPresent(String.self, forKey: .failure)
        isSignedOut = try container.decodeIfPresent(Bool.self, forKey: .isSignedOut) ?? false
        waitingToSend = try container.decodeIfPresent(Int.self, forKey: .waitingToSend) ?? 0
        couldNotSend = try container.decodeIfPresent(Int.self, forKey: .couldNotSend) ?? 0
    }
}
