import StateLoop

/// Everything a remote resource knows, as one state: the value, the request in flight, the
/// retry waiting, the failure that stops polling. Every timer and request of the resource is a
/// feedback of this state (see `ResourceMachine.feedbacks`), so cancellation, stale answers and
/// races between pull and push are the core's guarantees, not hand-written bookkeeping.
struct ResourceMachine<Value: Sendable>: Sendable {
    var value: Versioned<Value>?
    var subscribers = 0
    /// The request in flight, if any.
    var fetch: Fetch?
    /// The retry waiting for its backoff, if any.
    var retry: RetryWait?
    /// Set after an unrecoverable error or exhausted retries: no polling until a refresh.
    var failure: ResourceFailure?
    var isSlow = false
    var isOnline = true
    /// Successful refreshes, pushes included. The poll timer restarts whenever it changes, which
    /// is what counts polling from the last success.
    var successes: UInt64 = 0
    var lastFetchID: UInt64 = 0
    /// Requests started since the resource was created.
    var requestsStarted = 0
    /// Values dropped because an equal or newer version was already held.
    var outdatedDropped = 0

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
        case retryDue
        case graceExpired
        case connectivity(online: Bool)
    }

    var status: ResourceStatus<Value> {
        ResourceStatus(
            value: value,
            isLoading: fetch != nil,
            isSlow: isSlow,
            isOffline: !isOnline,
            isRetrying: retry != nil,
            failure: failure
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
                failure = nil
                retry = nil
                if fetch == nil { startFetch(attempt: 0) }
            }
        case .unsubscribed:
            subscribers = max(0, subscribers - 1)
        case .graceExpired:
            if subscribers == 0 {
                fetch = nil
                retry = nil
                isSlow = false
            }
        case .refresh:
            failure = nil
            retry = nil
            if fetch == nil { startFetch(attempt: 0) }
        case .pollDue:
            if fetch == nil && failure == nil && isOnline { startFetch(attempt: 0) }
        case .pushed(.value(let pushed)):
            isOnline = true
            // Only a push that brings a newer value counts as a refresh: a repeated or older
            // one neither restarts the poll timer nor makes a failing request moot.
            if receive(pushed) { successes += 1 }
        case .pushed(.changed):
            if fetch == nil && isOnline { startFetch(attempt: 0) }
        case .fetched(let id, let fetched):
            guard fetch?.id == id else { return }
            fetch = nil
            isSlow = false
            isOnline = true
            failure = nil
            // A successful pull is a refresh even when its answer was already outdated.
            receive(fetched)
            successes += 1
        case .fetchFailed(let id, let error):
            guard let failed = fetch, failed.id == id else { return }
            fetch = nil
            isSlow = false
            if successes > failed.successesAtStart {
                // A fresher value arrived by push while this request ran: nothing to show or retry.
                return
            }
            switch error.kind {
            case .unrecoverable:
                failure = error
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
        case .slow(let id):
            if fetch?.id == id { isSlow = true }
        case .retryDue:
            guard let waiting = retry, fetch == nil else { return }
            retry = nil
            startFetch(attempt: waiting.attempt)
        case .connectivity(let online):
            let cameBack = online && !isOnline
            isOnline = online
            if cameBack && subscribers > 0 && fetch == nil && failure == nil {
                // One refresh on coming back, carrying on the attempt that was waiting.
                let attempt = retry?.attempt ?? 0
                retry = nil
                startFetch(attempt: attempt)
            }
        }
    }

    private mutating func startFetch(attempt: Int) {
        lastFetchID += 1
        requestsStarted += 1
        isSlow = false
        fetch = Fetch(id: lastFetchID, attempt: attempt, successesAtStart: successes)
    }

    /// Keeps `incoming` if it is newer than the value held; returns whether it was.
    @discardableResult
    private mutating func receive(_ incoming: Versioned<Value>) -> Bool {
        switch Versioned<Value>.outcome(of: incoming.version, over: value?.version) {
        case .applied, .rebootstrapped:
            value = incoming
            return true
        case .duplicate, .outdated:
            outdatedDropped += 1
            return false
        }
    }
}

/// A message from the server's push channel.
public enum PushMessage<Value: Sendable>: Sendable {
    /// The new value, with its version.
    case value(Versioned<Value>)
    /// Something changed: pull to find out what.
    case changed
}

extension PushMessage: Equatable where Value: Equatable {}

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
}

extension ResourceStatus: Equatable where Value: Equatable {}
extension ResourceMachine: Equatable where Value: Equatable {}

extension ResourceMachine.Event: Equatable where Value: Equatable {}
