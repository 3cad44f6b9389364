import StateLoop
import StateLoopWire

/// Everything a remote resource knows, as one state: the value, the request in flight, the
/// retry waiting, the failure that stops polling. Every timer and request of the resource is a
/// feedback of this state (see `ResourceMachine.feedbacks`), so cancellation, stale answers and
/// races between pull and push are the core's guarantees, not hand-written bookkeeping.
struct ResourceMachine<Value: Sendable>: Sendable {
    var value: Versioned<Value>?
    var subscribers = 0
    /// The request in flight, if any.
    var fetch: Fetch?
    /// A hint (or a return of connectivity) arrived while a request was in flight: its answer
    /// may predate the change, so one more pull follows it. However many hints arrive, one pull.
    var pullAgain = false
    /// The retry waiting for its backoff, if any.
    var retry: RetryWait?
    /// Set after an unrecoverable error or exhausted retries: no polling until a refresh.
    var failure: ResourceFailure?
    /// The last push the resource could not use (unreadable, or a version no server can
    /// follow), until a usable push arrives.
    var pushFailure: ResourceFailure?
    var isSlow = false
    var isOnline = true
    /// Set while connectivity is back but has not stayed back for `reconnectSettle` yet.
    var settling: UInt64?
    var lastSettleID: UInt64 = 0
    /// Bumped each time a refresh (or a new first subscriber) ends an unauthorized failure: the
    /// push channel restarts on it, and optimistic resources resume sending.
    var session: UInt64 = 0
    /// Successful refreshes, pushes included. The poll timer restarts whenever it changes, which
    /// is what counts polling from the last success.
    var successes: UInt64 = 0
    var lastFetchID: UInt64 = 0
    /// Requests started since the resource was created.
    var requestsStarted = 0
    /// Values dropped because an equal or newer version was already held.
    var outdatedDropped = 0
    /// The version of the value dropped last.
    var lastDroppedVersion: Version?

    struct Fetch: Hashable, Sendable {
        let id: UInt64
        /// 0 for the first try, then the retry number.
        let attempt: Int
        /// `successes` when the request started: a push that lands meanwhile makes its failure moot.
        let successesAtStart: UInt64
    }

    struct RetryWait: Hashable, Sendable {
        let attempt: Int
        let delay: Duration
    }

    enum Event: Sendable {
        case subscribed
        case unsubscribed
        case refresh
        case pollDue
        case pushed(PushMessage<Value>)
        case fetched(id: UInt64, Versioned<Value>)
        case fetchFailed(id: UInt64, ResourceFailure)
        case slow(id: UInt64)
        case timedOut(id: UInt64, after: Duration)
        case retryDue
        case graceExpired
        case connectivity(online: Bool)
        case settled(id: UInt64)
        /// A mutation of this resource was refused for authorization.
        case unauthorized(ResourceFailure)
    }

    var isUnauthorized: Bool {
        failure?.kind == .unauthorized
    }

    var status: ResourceStatus<Value> {
        ResourceStatus(
            value: value,
            isLoading: fetch != nil,
            isSlow: isSlow,
            isOffline: !isOnline,
            isRetrying: retry != nil,
            failure: failure,
            pushFailure: pushFailure,
            session: session
        )
    }

    // MARK: Reducer

    static func reduce(policy: ResourcePolicy) -> @Sendable (inout ResourceMachine, Event) -> Void {
        { state, event in state.apply(event, policy: policy) }
    }

    mutating func apply(_ event: Event, policy: ResourcePolicy) {
        switch event {
        case .subscribed:
            subscribers += 1
            if subscribers == 1 {
                // A new first subscriber starts afresh, whatever stopped the last one.
                clearFailure()
                retry = nil
                if fetch == nil { startFetch(attempt: 0) }
            }
        case .unsubscribed:
            subscribers = max(0, subscribers - 1)
        case .graceExpired:
            if subscribers == 0 {
                fetch = nil
                retry = nil
                pullAgain = false
                isSlow = false
            }
        case .refresh:
            clearFailure()
            retry = nil
            if fetch == nil { startFetch(attempt: 0) }
        case .pollDue:
            if fetch == nil && failure == nil && isOnline && settling == nil { startFetch(attempt: 0) }
        case .pushed(let message):
            receivePush(message, policy: policy)
        case .fetched(let id, let fetched):
            guard fetch?.id == id else { return }
            guard fetched.version.isFollowable else {
                return apply(.fetchFailed(id: id, ResourceFailure(unfollowable: fetched.version)), policy: policy)
            }
            fetch = nil
            isSlow = false
            isOnline = true
            failure = nil
            // A successful pull is a refresh even when its answer was already outdated.
            receive(fetched)
            successes += 1
            if pullAgain { startFetch(attempt: 0) }
        case .fetchFailed(let id, let error):
            guard let failed = fetch, failed.id == id else { return }
            fetchFailed(failed, error, policy: policy)
        case .timedOut(let id, let timeout):
            guard let running = fetch, running.id == id else { return }
            let error = RequestTimeoutError(timeout: timeout)
            fetchFailed(running, ResourceFailure(error, kind: .transient(retryAfter: nil)), policy: policy)
        case .slow(let id):
            if fetch?.id == id { isSlow = true }
        case .retryDue:
            guard let waiting = retry, fetch == nil else { return }
            retry = nil
            startFetch(attempt: waiting.attempt)
        case .connectivity(let online):
            connectivityChanged(online: online)
        case .settled(let id):
            guard settling == id else { return }
            settling = nil
            guard subscribers > 0 && failure == nil else { return }
            if fetch == nil {
                // One refresh once the network has settled, carrying on the attempt that waited.
                let attempt = retry?.attempt ?? 0
                retry = nil
                startFetch(attempt: attempt)
            } else {
                pullAgain = true
            }
        case .unauthorized(let error):
            becomeUnauthorized(error)
        }
    }

    private mutating func receivePush(_ message: PushMessage<Value>, policy: ResourcePolicy) {
        switch message {
        case .value(let pushed):
            guard pushed.version.isFollowable else {
                pushFailure = ResourceFailure(unfollowable: pushed.version)
                return
            }
            isOnline = true
            settling = nil
            pushFailure = nil
            // Only a push that brings a newer value counts as a refresh: a repeated or older
            // one neither restarts the poll timer nor makes a failing request moot.
            if receive(pushed) { successes += 1 }
        case .changed:
            hinted()
        case .failed(let error):
            let failure = ResourceFailure(error, kind: policy.classify(error))
            if failure.kind == .unauthorized {
                becomeUnauthorized(failure)
            } else {
                // What the push channel could not deliver, a pull can. A refusal with a status
                // means the server answered: the network is up, whatever the socket said.
                if error is HTTPStatusError || error is PushRefusedError, !isOnline {
                    isOnline = true
                    settling = nil
                }
                pushFailure = failure
                // A retry already waiting will pull: a socket failing over and over (a server
                // down) must not cut its backoff short.
                if retry == nil { hinted() }
            }
        }
    }

    /// Something changed on the server: pull, or pull once more after the request in flight,
    /// whose answer may predate the change. While connectivity settles, its pull covers it. A
    /// retry waiting its backoff is pulled now, carrying on its attempt number.
    private mutating func hinted() {
        guard isOnline, settling == nil, !isUnauthorized else { return }
        if fetch == nil {
            startFetch(attempt: retry?.attempt ?? 0)
        } else {
            pullAgain = true
        }
    }

    private mutating func fetchFailed(_ failed: Fetch, _ error: ResourceFailure, policy: ResourcePolicy) {
        fetch = nil
        isSlow = false
        // A retry (or the failure) supersedes the extra pull a hint asked for.
        pullAgain = false
        if successes > failed.successesAtStart && error.kind != .unauthorized {
            // A fresher value arrived by push while this request ran: nothing to show or retry.
            return
        }
        switch error.kind {
        case .unrecoverable:
            failure = error
        case .unauthorized:
            becomeUnauthorized(error)
        case .transient(let retryAfter):
            if !isOnline {
                // Offline failures use up no attempt: the same attempt waits for the network.
                retry = RetryWait(attempt: failed.attempt, delay: .zero)
            } else if failed.attempt < policy.maxRetries {
                let next = failed.attempt + 1
                retry = RetryWait(
                    attempt: next,
                    delay: retryAfter ?? policy.jitter(policy.backoff(beforeRetry: next))
                )
            } else {
                failure = error
            }
        }
    }

    private mutating func connectivityChanged(online: Bool) {
        // While the server refuses the session, the push channel is stopped on purpose: its
        // sockets closing say nothing about the network, and the next refresh finds out.
        guard !isUnauthorized else { return }
        let cameBack = online && !isOnline
        isOnline = online
        if !online {
            settling = nil
        } else if cameBack {
            // The pull waits for the network to stay back (`reconnectSettle`): each flap
            // restarts the wait, so a flapping network costs one pull.
            lastSettleID += 1
            settling = lastSettleID
        }
    }

    /// The server refused the credentials: nothing is retried, polled or pushed until a
    /// refresh. The server answered, so the network is up.
    private mutating func becomeUnauthorized(_ error: ResourceFailure) {
        failure = error
        fetch = nil
        retry = nil
        pullAgain = false
        isSlow = false
        isOnline = true
        settling = nil
    }

    /// Clears a failure before a new start; ending an unauthorized failure starts a new session.
    private mutating func clearFailure() {
        if isUnauthorized { session += 1 }
        failure = nil
    }

    /// Starts a request. Whatever retry waited is replaced by it: a retry left behind a
    /// request would outlive it, and its wait, already over, would never end again (its timer's
    /// query unchanged), holding off every poll for good.
    private mutating func startFetch(attempt: Int) {
        retry = nil
        lastFetchID += 1
        requestsStarted += 1
        isSlow = false
        pullAgain = false
        fetch = Fetch(id: lastFetchID, attempt: attempt, successesAtStart: successes)
    }

    /// Keeps `incoming` if it is newer than the value held; returns whether it was. A repeat of
    /// the held version still brings the server's newer `lastMutationID`, if it has one.
    @discardableResult
    private mutating func receive(_ incoming: Versioned<Value>) -> Bool {
        switch Versioned<Value>.outcome(of: incoming.version, over: value?.version) {
        case .applied, .rebootstrapped:
            value = incoming
            return true
        case .duplicate:
            value?.adoptLastMutationID(of: incoming)
            outdatedDropped += 1
            lastDroppedVersion = incoming.version
            return false
        case .outdated:
            outdatedDropped += 1
            lastDroppedVersion = incoming.version
            return false
        }
    }
}

extension ResourceFailure {
    init(unfollowable version: Version) {
        let error = UnfollowableVersionError(version: version)
        self.init(error, kind: .unrecoverable)
    }
}

/// A message from the server's push channel.
public enum PushMessage<Value: Sendable>: Sendable {
    /// The new value, with its version.
    case value(Versioned<Value>)
    /// Something changed: pull to find out what.
    case changed
    /// The push channel could not deliver: the server refused it (401 or 403 as an
    /// ``HTTPStatusError``: the resource becomes unauthorized and stops pushing, pulling and
    /// polling until a refresh), or sent something unreadable (reported in
    /// ``ResourceStatus/pushFailure``, and a pull fetches what it could not say).
    case failed(any Error)
}

extension PushMessage: Equatable where Value: Equatable {
    public static func == (lhs: PushMessage, rhs: PushMessage) -> Bool {
        switch (lhs, rhs) {
        case (.value(let a), .value(let b)): a == b
        case (.changed, .changed): true
        case (.failed(let a), .failed(let b)): String(describing: a) == String(describing: b)
        default: false
        }
    }
}

/// What a screen shows of a remote resource.
public struct ResourceStatus<Value: Sendable>: Sendable {
    /// The newest value received, if any.
    public var value: Versioned<Value>?
    /// A request is in flight.
    public var isLoading: Bool
    /// The request in flight is taking longer than expected.
    public var isSlow: Bool
    /// The resource believes the network is down; polling and retries wait for it.
    public var isOffline: Bool
    /// A retry is waiting for its backoff.
    public var isRetrying: Bool
    /// Why the resource gave up, until a manual refresh.
    public var failure: ResourceFailure?
    /// The last push that could not be used, until a usable one arrives. The resource pulls
    /// instead, so this is for logs and diagnostics.
    public var pushFailure: ResourceFailure?
    /// Which session the status belongs to: bumped each time a refresh ends an unauthorized
    /// failure, so that a follower can tell a status from after a new sign-in from one before.
    var session: UInt64 = 0

    /// The server refused the credentials: the app should sign in again, then call
    /// ``RemoteResource/refresh()``.
    public var isUnauthorized: Bool {
        failure?.kind == .unauthorized
    }

    /// A status from its parts.
    public init(
        value: Versioned<Value>?,
        isLoading: Bool = false,
        isSlow: Bool = false,
        isOffline: Bool = false,
        isRetrying: Bool = false,
        failure: ResourceFailure? = nil,
        pushFailure: ResourceFailure? = nil
    ) {
        self.value = value
        self.isLoading = isLoading
        self.isSlow = isSlow
        self.isOffline = isOffline
        self.isRetrying = isRetrying
        self.failure = failure
        self.pushFailure = pushFailure
    }

    init(
        value: Versioned<Value>?, isLoading: Bool, isSlow: Bool, isOffline: Bool, isRetrying: Bool,
        failure: ResourceFailure?, pushFailure: ResourceFailure?, session: UInt64
    ) {
        self.init(
            value: value, isLoading: isLoading, isSlow: isSlow, isOffline: isOffline,
            isRetrying: isRetrying, failure: failure, pushFailure: pushFailure
        )
        self.session = session
    }

    /// Nothing says the server is out of reach: online, no retry waiting, no failure.
    var isReachable: Bool {
        !isOffline && !isRetrying && failure == nil
    }

    /// Whether a subscriber would see the same thing in both: every flag and failure, and the
    /// value's version and last mutation id (a new value always brings a new version).
    func looksLike(_ other: ResourceStatus) -> Bool {
        value?.version == other.value?.version && value?.lastMutationID == other.value?.lastMutationID
            && isLoading == other.isLoading && isSlow == other.isSlow && isOffline == other.isOffline
            && isRetrying == other.isRetrying && failure == other.failure
            && pushFailure == other.pushFailure && session == other.session
    }
}

extension ResourceStatus: Equatable where Value: Equatable {}
extension ResourceMachine: Equatable where Value: Equatable {}

extension ResourceMachine.Event: Equatable where Value: Equatable {}
