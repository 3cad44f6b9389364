/// How a resource is doing, for a status line: what a screen shows beside the value.
///
/// Not `Codable` on purpose: health describes this launch's connection, so a journal that kept
/// it would restore a stale "offline" or "loading" only to have it overwritten at once.
/// ``ResourceSnapshot`` carries it beside the value and leaves it out of its encoding.
public struct ResourceHealth: Sendable, Hashable {
    /// A request is in flight with nothing to show yet.
    public var isLoading = false
    /// The request in flight is taking longer than the policy's slow threshold.
    public var isSlow = false
    /// The network or the push channel is down: the value shown is the last known one.
    public var isOffline = false
    /// The last failure's message, until a success. A refused session is ``isSignedOut``
    /// instead.
    public var failure: String?
    /// The server no longer accepts the session (it expired, was revoked, or the server forgot
    /// it): the user must sign in again.
    public var isSignedOut = false
    /// The user's changes that wait to be sent (the server away, or a retry's backoff): kept,
    /// and sent once the server can be reached.
    public var waitingToSend = 0
    /// The user's changes held past the policy's ``ResourcePolicy/maximumMutationAge`` unsent,
    /// until the app retries or discards them.
    public var couldNotSend = 0

    /// A health from its parts; all well by default.
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

    /// The health of a resource's status.
    public init<Value>(_ status: ResourceStatus<Value>) {
        self.init(
            isLoading: status.isLoading,
            isSlow: status.isSlow,
            isOffline: status.isOffline,
            failure: status.isUnauthorized ? nil : status.failure?.message,
            isSignedOut: status.isUnauthorized
        )
    }

    /// The health of an optimistic resource's status: its resource's, and where the changes the
    /// server has not accepted stand.
    public init<M>(_ status: OptimisticStatus<M>) {
        self.init(status.resource)
        switch status.delivery {
        case .idle, .sending: break
        case .waiting(let count, _): waitingToSend = count
        case .couldNotSend(let count): couldNotSend = count
        }
    }
}
