import StateLoopWire

/// How a ``RemoteResource`` retries, polls and reports slowness.
public struct ResourcePolicy: Sendable {
    /// Retries of a pull after a transient failure before giving up (then no polling until a
    /// refresh). A mutation is never given up on for a transient failure: it waits, retried
    /// with the same backoff, however long the server stays away (see ``maximumMutationAge``).
    public var maxRetries = 3
    /// The wait before the first retry; each later retry waits twice as long.
    public var initialBackoff: Duration = .seconds(1)
    /// The longest wait between two retries.
    public var maxBackoff: Duration = .seconds(30)
    /// Spreads retries of many clients apart: maps the computed backoff to the wait used.
    /// Defaults to "equal jitter", a wait between half and all of the backoff.
    public var jitter: @Sendable (Duration) -> Duration = ResourcePolicy.equalJitter
    /// Time between two refreshes, counted from the last successful one (a push counts);
    /// `nil` turns polling off.
    public var pollInterval: Duration? = .seconds(60)
    /// How long a request may run before the resource reports itself slow.
    public var slowThreshold: Duration = .seconds(3)
    /// How long a request may run before it is given up as a transient failure (and retried):
    /// a server that trickles its answer cannot hold the resource, or the refreshes joined to
    /// its request, for longer. `nil` waits forever.
    public var requestTimeout: Duration? = .seconds(30)
    /// How long connectivity must stay back before the resource pulls: a network that flaps
    /// costs one pull once it settles, not one per flap.
    public var reconnectSettle: Duration = .milliseconds(250)
    /// How long a request in flight survives its last subscriber leaving, so that a screen
    /// replaced by another one that needs the same data does not pay for a second request.
    public var gracePeriod: Duration = .seconds(2)
    /// How long an optimistic mutation may wait unsent (the server away, the network down)
    /// before it is held as ``MutationStatus/expired``: still shown, sent again only when the
    /// app retries it, or dropped when the app discards it, never dropped by itself. `nil`, the
    /// default, lets a mutation wait for as long as it takes. Counted on the wall clock from
    /// when the mutation was queued, across relaunches.
    public var maximumMutationAge: Duration?
    /// Tells transient failures (retried) from unrecoverable ones (reported, no polling).
    public var classify: @Sendable (any Error) -> FailureKind = FailureKind.classify

    /// The defaults: 3 retries of a pull (a mutation's, for as long as it takes) from 1 s
    /// doubling up to 30 s with jitter, a poll a minute, slow after 3 s, requests given up after
    /// 30 s, a pull 250 ms after connectivity comes back, a 2 s grace period, no maximum age for
    /// a mutation.
    public init() {}

    /// The backoff before retry number `retry` (1 for the first), before jitter.
    public func backoff(beforeRetry retry: Int) -> Duration {
        var delay = initialBackoff
        for _ in 1..<max(retry, 1) {
            delay *= 2
            if delay >= maxBackoff { return maxBackoff }
        }
        return min(delay, maxBackoff)
    }

    /// A wait between half and all of `backoff`, at random.
    public static let equalJitter: @Sendable (Duration) -> Duration = { backoff in
        backoff / 2 + backoff / 2 * Double.random(in: 0...1)
    }

    /// The backoff as computed, for tests that need exact times.
    public static let noJitter: @Sendable (Duration) -> Duration = { $0 }
}

/// How a failed request should be handled.
public enum FailureKind: Sendable, Hashable {
    /// Worth retrying; `retryAfter` is the server's own wait, when it gave one.
    case transient(retryAfter: Duration?)
    /// Not worth retrying: report it and stop polling until a manual refresh.
    case unrecoverable
    /// The server no longer accepts the client's credentials (the session expired, was revoked,
    /// or the server forgot it). Nothing is retried, polled or reconnected, and mutations wait,
    /// until the app signs in again and refreshes. Not a connectivity problem: the server answered.
    case unauthorized

    /// The default classification: HTTP 408, 429 and 5xx are transient (honouring
    /// `Retry-After`), 401 and 403 are `unauthorized`, 404, 410 and any other 4xx are
    /// unrecoverable, a version no server can follow is unrecoverable, and every other error
    /// (transport errors, timeouts) is transient.
    public static func classify(_ error: any Error) -> FailureKind {
        if error is UnfollowableVersionError { return .unrecoverable }
        guard let http = error as? HTTPStatusError else { return .transient(retryAfter: nil) }
        switch http.status {
        case 408, 429, 500...599: return .transient(retryAfter: http.retryAfter)
        case 401, 403: return .unauthorized
        default: return .unrecoverable
        }
    }
}

/// An HTTP answer whose status is not a success, as thrown by pull sources.
public struct HTTPStatusError: Error, Hashable, Sendable, CustomStringConvertible {
    /// The status code.
    public var status: Int
    /// The wait the server asked for in `Retry-After`, if any.
    public var retryAfter: Duration?

    /// An error for `status`, with the server's `Retry-After` if it sent one.
    public init(status: Int, retryAfter: Duration? = nil) {
        self.status = status
        self.retryAfter = retryAfter
    }

    public var description: String {
        "HTTP \(status)" + (retryAfter.map { " (retry after \($0))" } ?? "")
    }
}

/// A request that ran longer than ``ResourcePolicy/requestTimeout``: given up, and retried as a
/// transient failure.
public struct RequestTimeoutError: Error, Hashable, Sendable, CustomStringConvertible {
    /// The deadline that passed.
    public var timeout: Duration

    /// The error of a request given up at `timeout`.
    public init(timeout: Duration) {
        self.timeout = timeout
    }

    public var description: String {
        "no answer within \(timeout)"
    }
}

/// The server refused to open the push channel, without saying why in a way the transport can
/// read (a WebSocket client sees "upgrade failed", not the status). The server answered, so the
/// network is up; the resource pulls to find out the rest (a 401 there signs it out).
public struct PushRefusedError: Error, Hashable, Sendable, CustomStringConvertible {
    /// A refusal.
    public init() {}

    public var description: String {
        "the server refused the push connection"
    }
}

/// A value whose version no server can follow: its counter is at the largest possible value, so
/// every later version would look older and the resource would be stuck on it for good. Such a
/// value is refused, as an unrecoverable failure.
public struct UnfollowableVersionError: Error, Hashable, Sendable, CustomStringConvertible {
    /// The version refused.
    public var version: Version

    public var description: String {
        "refused version \(version): its counter is at the maximum, no later version could follow"
    }
}

/// A failure a resource reports: what went wrong, and whether it was given up on.
public struct ResourceFailure: Error, Sendable, Equatable, CustomStringConvertible {
    /// A description of the error, for the screen and the logs.
    public let message: String
    /// How the error was classified.
    public let kind: FailureKind
    /// The error itself.
    public let underlying: any Error

    init(_ error: any Error, kind: FailureKind) {
        self.message = String(describing: error)
        self.kind = kind
        self.underlying = error
    }

    public static func == (lhs: ResourceFailure, rhs: ResourceFailure) -> Bool {
        lhs.message == rhs.message && lhs.kind == rhs.kind
    }

    public var description: String {
        message
    }
}
