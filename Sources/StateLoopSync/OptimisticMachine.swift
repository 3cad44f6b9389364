import Foundation
import StateLoop
import StateLoopWire

/// The state of an optimistic resource: the server's confirmed value, and the queue of the
/// app's mutations on top of it. The visible value is always derived, never stored, so a
/// rollback cannot restore an old snapshot over newer server data: it removes one mutation and
/// replays the others on the newest confirmed value.
///
/// Sending is a query too: ``outgoing`` names the mutation and the attempt to send now, so each
/// retry, each deadline and each pause (for a backoff, for a new sign-in) is a change of that
/// answer, and the core cancels whatever the previous answer started.
struct OptimisticMachine<M: Mutation>: Sendable {
    /// The newest value the server confirmed (by pull, push or reload).
    var confirmed: Versioned<M.Value>?
    /// The underlying resource's latest status: its health, for the screen.
    var resource = ResourceStatus<M.Value>(value: nil)
    /// The app's mutations, oldest first, not yet contained in `confirmed`.
    var queue: [PendingMutation<M>] = []
    /// Refusals not yet reported, oldest first; the `OptimisticResource` hands them out.
    var refusals: [RefusedMutation<M>] = []
    /// Set once the stored queue was loaded; nothing is sent before.
    var isRestored = false
    /// Whose mutations a confirmed value's `lastMutationID` speaks of.
    var client: ClientID
    /// The attempt at the oldest unanswered mutation, and the backoff it waits out, if any.
    var attempt: SendAttempt?
    /// The sequence number of the newest mutation of `client` queued so far: a status knows
    /// every mutation made up to it.
    var lastQueued: UInt64 = 0
    /// Set when the server refused a mutation's credentials, to the resource session then:
    /// nothing is sent until the resource reports a later session (a new sign-in).
    var blockedSession: UInt64?
    /// The resource session the mutation in flight was sent in: a 401 answers for that session,
    /// which a new sign-in may have replaced while the request was out.
    var sentInSession: UInt64?
    /// Why the last attempt did not go through (the server away, a 5xx, a refused session),
    /// until an attempt does: what a screen says while mutations wait.
    var sendFailure: ResourceFailure?
    /// Mutations the app discarded, not yet reported to watchers.
    var discarded: [MutationID] = []
    /// The restored mutations that an earlier launch queued under its own client id: no value's
    /// `lastMutationID` speaks of them (it counts this launch's client), so only the answer to
    /// their resend (the version the server applied them at) tells whether a value contains
    /// them.
    var earlierLaunch: Set<MutationID> = []
    /// The newest confirmed value received while one of those waits for its answer, held back
    /// so that a value that already contains it does not show it twice; taken once none waits.
    var held: Versioned<M.Value>?
    /// Set when a value the server sent was taken while a restored mutation of an earlier
    /// launch waited for its answer, with no value of the last launch's to show instead (its
    /// store kept none): that value may contain the mutation already.
    var tookValueBeforeAnswers = false

    init(client: ClientID = ClientID()) {
        self.client = client
    }

    /// Whether a restored mutation of an earlier launch is still waiting for the server's
    /// answer. One past its maximum age does not count: it may wait for good.
    var awaitsEarlierLaunch: Bool {
        !earlierLaunch.isEmpty && queue.contains(where: awaitsAnswer)
    }

    /// Whether `pending` was queued by an earlier launch and still waits for the server's
    /// answer.
    private func awaitsAnswer(_ pending: PendingMutation<M>) -> Bool {
        earlierLaunch.contains(pending.id) && (pending.status == .pending || pending.status == .sent)
    }

    /// Whether confirmed values are held back (see ``held``): while a restored mutation of an
    /// earlier launch waits for its answer, and a confirmed value is shown meanwhile. With none
    /// (a store that keeps no value), the first value is taken, or the screen would have
    /// nothing to show until the server answers.
    var holdsValues: Bool {
        confirmed != nil && awaitsEarlierLaunch
    }

    /// The confirmed value with every queued mutation replayed on top, in order. Over a value
    /// taken before an earlier launch's mutations were answered (``tookValueBeforeAnswers``),
    /// those still waiting are left out until their answers say whether it holds them: shown on
    /// top of a value that holds it, a mutation would show twice.
    var visible: M.Value? {
        guard let confirmed else { return nil }
        guard tookValueBeforeAnswers, awaitsEarlierLaunch else { return queue.replayed(on: confirmed.value) }
        return queue.filter { !awaitsAnswer($0) }.replayed(on: confirmed.value)
    }

    /// The mutation to send now: the oldest one the server has not answered. One at a time, in
    /// order: the next one becomes the query's answer only when this one is answered. `nil`
    /// while a retry waits its backoff and while the server refuses the credentials.
    ///
    /// Also `nil` while the resource is offline, unless the attempt is already on its way (an
    /// answer may still come), and while the oldest unanswered mutation is
    /// ``MutationStatus/expired``: the ones after it wait behind it, so that the server applies
    /// them in the order the user made them.
    var outgoing: Outgoing? {
        guard isRestored, blockedSession == nil, !resource.isUnauthorized else { return nil }
        guard let next = firstUnanswered, next.status != .expired else { return nil }
        guard !resource.isOffline || next.status == .sent else { return nil }
        guard let attempt, attempt.id == next.id else { return Outgoing(id: next.id, mutation: next.mutation, attempt: 0, queuedAt: next.queuedAt) }
        return attempt.backoff == nil ? Outgoing(id: next.id, mutation: next.mutation, attempt: attempt.number, queuedAt: next.queuedAt) : nil
    }

    /// The oldest mutation the server has not accepted.
    var firstUnanswered: PendingMutation<M>? {
        queue.first(where: { if case .confirmed = $0.status { false } else { true } })
    }

    /// The oldest unanswered mutation and when it was queued, while it may still expire: the
    /// only one whose age matters, since nothing after it is sent before it.
    var expiry: Expiry? {
        guard isRestored, let next = firstUnanswered, next.status != .expired, let queuedAt = next.queuedAt else { return nil }
        return Expiry(id: next.id, queuedAt: queuedAt)
    }

    /// How the unanswered mutations are doing, for a status line.
    var delivery: MutationDelivery {
        let unanswered = queue.count { if case .confirmed = $0.status { false } else { true } }
        guard let next = firstUnanswered else { return .idle }
        if next.status == .expired { return .couldNotSend(count: unanswered) }
        if outgoing != nil { return .sending(count: unanswered) }
        return .waiting(count: unanswered, failure: sendFailure)
    }

    struct Expiry: Hashable, Sendable {
        let id: MutationID
        let queuedAt: Date
    }

    /// The backoff to wait before retrying the oldest unanswered mutation.
    var backoff: SendAttempt? {
        guard let attempt, attempt.backoff != nil, queue.contains(where: { $0.id == attempt.id }) else { return nil }
        return attempt
    }

    struct Outgoing: Equatable, Sendable {
        let id: MutationID
        let mutation: M
        let attempt: Int
        /// When it was queued: an attempt that comes after its maximum age is not made.
        let queuedAt: Date?

        static func == (lhs: Outgoing, rhs: Outgoing) -> Bool {
            lhs.id == rhs.id && lhs.attempt == rhs.attempt
        }
    }

    struct SendAttempt: Hashable, Sendable {
        let id: MutationID
        /// 0 for the first send, then the retry number.
        let number: Int
        /// Set while waiting before the next attempt.
        var backoff: Duration?
    }

    enum Event: Sendable {
        /// The stored queue, the stored confirmed value if the store keeps one, and the
        /// mutations the store dropped.
        case restored([PendingMutation<M>], confirmed: Versioned<M.Value>?, dropped: [DroppedMutation] = [])
        /// The underlying resource's status: its value is one more confirmed value.
        case resourceChanged(ResourceStatus<M.Value>)
        case confirmedValue(Versioned<M.Value>)
        case mutate(PendingMutation<M>)
        case sending(MutationID)
        case acknowledged(MutationID, Version)
        /// An attempt failed; the failure's kind decides between a retry, a pause and a refusal.
        case sendFailed(MutationID, attempt: Int, ResourceFailure)
        case retryDue(MutationID)
        case refused(MutationID, ResourceFailure)
        /// The oldest unanswered mutation passed the policy's maximum age unsent.
        case expired(MutationID)
        /// The app asked to send an expired mutation again, its age counted from `at`.
        case retry(MutationID, at: Date)
        /// The app gave up an expired mutation.
        case discard(MutationID)
        /// The host handed out the first `refusals` refusals and `discards` discarded ids.
        case reported(refusals: Int, discards: Int)
    }

    mutating func apply(_ event: Event, policy: ResourcePolicy) {
        switch event {
        case .restored(let stored, let storedConfirmed, let dropped):
            refusals += dropped.map { RefusedMutation(id: $0.id, mutation: nil, error: ResourceFailure($0, kind: .unrecoverable)) }
            // Mutations made before the restore finished stay after the stored ones.
            queue =
                stored.map { pending in
                    var pending = pending
                    if pending.status == .sent { pending.status = .pending }
                    return pending
                } + queue
            let client = client
            earlierLaunch = Set(stored.lazy.filter { $0.id.sequence(of: client) == nil }.map(\.id))
            isRestored = true
            // The stored value's `lastMutationID` counted the earlier launch's client: read as
            // this launch's, it would drop this launch's mutations unsent.
            let stored = storedConfirmed.map { Versioned($0.value, version: $0.version) }
            if awaitsEarlierLaunch, let stored {
                // What the last launch showed, until the restored mutations are answered; a
                // value the server sent meanwhile waits.
                held = newest(held, confirmed)
                confirmed = stored
            } else if let stored {
                // A stored value is one more confirmed value: kept only if nothing newer came.
                receive(stored)
            } else if confirmed != nil, awaitsEarlierLaunch {
                // The server's value came before the restore finished: it may hold them.
                tookValueBeforeAnswers = true
            }
            dropContained()
        case .resourceChanged(let status):
            let cameBack = (resource.isOffline && !status.isOffline) || (!resource.isReachable && status.isReachable)
            resource = status
            if let blockedSession, status.session > blockedSession, !status.isUnauthorized {
                // Signed in again: send what waited, with the same ids.
                self.blockedSession = nil
            }
            if cameBack, attempt?.backoff != nil {
                // The server can be reached again: what waited goes now, not at the end of a
                // backoff that may have grown to its maximum during the outage.
                attempt?.backoff = nil
            }
            if let value = status.value { receive(value) }
        case .confirmedValue(let value):
            receive(value)
        case .mutate(let pending):
            queue.append(pending)
            if let sequence = pending.id.sequence(of: client) { lastQueued = max(lastQueued, sequence) }
        case .sending(let id):
            sentInSession = resource.session
            update(id) { $0.status = .sent }
        case .acknowledged(let id, let version):
            update(id) { $0.status = .confirmed(version) }
            sendFailure = nil
            dropContained()
        case .sendFailed(let id, let number, let error):
            guard let current = outgoing, current.id == id, current.attempt == number else { return }
            sendFailed(current, error, policy: policy)
        case .retryDue(let id):
            guard attempt?.id == id else { return }
            attempt?.backoff = nil
        case .refused(let id, let error):
            refuse(id, error)
        case .expired(let id):
            guard let next = firstUnanswered, next.id == id, next.status != .expired else { return }
            update(id) { $0.status = .expired }
            attempt = nil
        case .retry(let id, let date):
            guard queue.contains(where: { $0.id == id && $0.status == .expired }) else { return }
            update(id) {
                $0.status = .pending
                $0.queuedAt = date
            }
        case .discard(let id):
            guard let index = queue.firstIndex(where: { $0.id == id && $0.status == .expired }) else { return }
            queue.remove(at: index)
            discarded.append(id)
        case .reported(let refusalCount, let discardCount):
            refusals.removeFirst(min(refusalCount, refusals.count))
            discarded.removeFirst(min(discardCount, discarded.count))
        }
        if let value = held, !holdsValues {
            held = nil
            receive(value)
        }
    }

    /// The newer of two values by version (the second when they tie: it may carry a newer
    /// `lastMutationID`).
    private func newest(_ first: Versioned<M.Value>?, _ second: Versioned<M.Value>?) -> Versioned<M.Value>? {
        guard let second else { return first }
        switch Versioned<M.Value>.outcome(of: second.version, over: first?.version) {
        case .applied, .rebootstrapped, .duplicate: return second
        case .outdated: return first
        }
    }

    private mutating func sendFailed(_ current: Outgoing, _ error: ResourceFailure, policy: ResourcePolicy) {
        switch error.kind {
        case .transient(let retryAfter):
            // Only the server refuses a mutation: a failure that says nothing about it (the
            // server away, a 5xx, a deadline) is retried for as long as it takes, with the same
            // mutation id, which a server that honours ids applies once. The backoff is capped
            // by the policy, and cut short when the server can be reached again.
            let next = current.attempt + 1
            attempt = SendAttempt(
                id: current.id,
                number: next,
                backoff: retryAfter ?? policy.jitter(policy.backoff(beforeRetry: next))
            )
            sendFailure = error
            update(current.id) { $0.status = .pending }
        case .unauthorized:
            // Not the mutation's fault: it waits, unsent, for a session later than the one it
            // was sent in. When the user signed in again while the request was out, that session
            // is already here, and it goes again at once: waiting for one more sign-in would
            // hold the queue for good.
            let refusedSession = sentInSession ?? resource.session
            if resource.session <= refusedSession || resource.isUnauthorized {
                blockedSession = refusedSession
                attempt = nil
            } else {
                // A new attempt number, so that the send starts again though nothing else changed.
                attempt = SendAttempt(id: current.id, number: current.attempt + 1, backoff: nil)
            }
            sendFailure = error
            update(current.id) { $0.status = .pending }
        case .unrecoverable:
            // The server answered and refused it (a 4xx): the one outcome that removes it.
            sendFailure = nil
            refuse(current.id, error)
        }
    }

    private mutating func refuse(_ id: MutationID, _ error: ResourceFailure) {
        guard let index = queue.firstIndex(where: { $0.id == id }) else { return }
        let refused = queue.remove(at: index)
        refusals.append(RefusedMutation(id: id, mutation: refused.mutation, error: error))
    }

    /// Keeps `value` if it is newer than the confirmed one, then drops what it contains; holds
    /// it while a restored mutation of an earlier launch waits for its answer.
    private mutating func receive(_ value: Versioned<M.Value>) {
        if holdsValues {
            held = newest(newest(confirmed, held), value)
            return
        }
        switch Versioned<M.Value>.outcome(of: value.version, over: confirmed?.version) {
        case .applied, .rebootstrapped:
            if confirmed == nil, awaitsEarlierLaunch { tookValueBeforeAnswers = true }
            confirmed = value
        case .duplicate:
            confirmed?.adoptLastMutationID(of: value)
        case .outdated:
            return
        }
        dropContained()
    }

    private mutating func update(_ id: MutationID, _ change: (inout PendingMutation<M>) -> Void) {
        if let index = queue.firstIndex(where: { $0.id == id }) {
            change(&queue[index])
        }
    }

    /// Drops the mutations that the confirmed value already contains: every mutation of this
    /// client up to the server's `lastMutationID` (applied or refused there, answered or not
    /// here), and the acknowledged ones whose version the confirmed value has reached.
    private mutating func dropContained() {
        guard let confirmed else { return }
        let processed = confirmed.lastMutationID ?? 0
        queue.removeAll { pending in
            if let sequence = pending.id.sequence(of: client), sequence <= processed { return true }
            if case .confirmed(let acknowledged) = pending.status { return acknowledged <= confirmed.version }
            return false
        }
        if let attempt, !queue.contains(where: { $0.id == attempt.id }) {
            self.attempt = nil
        }
    }

    static func reduce(policy: ResourcePolicy) -> @Sendable (inout OptimisticMachine, Event) -> Void {
        { state, event in state.apply(event, policy: policy) }
    }

    /// Sends the outgoing mutation, saves the queue whenever it changes, and loads the stored
    /// queue at start.
    ///
    /// - Parameters:
    ///   - statuses: Delivers each status of the underlying resource.
    ///   - reportUnauthorized: Tells the underlying resource that the server refused a
    ///     mutation's credentials, so that it stops too and shows it.
    static func feedbacks(
        send: @escaping @Sendable (M, MutationID) async throws -> Version,
        store: (any MutationStore<M>)?,
        policy: ResourcePolicy,
        clock: any Clock<Duration>,
        now: @escaping @Sendable () -> Date,
        statuses: @escaping @Sendable (@escaping @Sendable (ResourceStatus<M.Value>) async -> Void) async -> Void,
        reportUnauthorized: @escaping @Sendable (ResourceFailure) -> Void = { _ in }
    ) -> [Feedback<OptimisticMachine, Event>] {
        [
            .react(query: { _ in true }) { _, send in
                let stored = (try? await store?.load()) ?? []
                let confirmed = try? await store?.loadConfirmed()
                let dropped = (try? await store?.takeDropped()) ?? []
                await send(.restored(stored, confirmed: confirmed ?? nil, dropped: dropped))
            },
            .react(query: \.outgoing) { outgoing, events in
                // Its age is checked here as well as by its timer: a mutation that was already
                // too old when it became the next to send (a relaunch, the one before it
                // discarded) must not race its timer to the server.
                if let maximumAge = policy.maximumMutationAge, let queuedAt = outgoing.queuedAt,
                    Duration.seconds(now().timeIntervalSince(queuedAt)) >= maximumAge
                {
                    await events(.expired(outgoing.id))
                    return
                }
                await events(.sending(outgoing.id))
                do {
                    let version = try await send(outgoing.mutation, outgoing.id)
                    await events(.acknowledged(outgoing.id, version))
                } catch {
                    let failure = ResourceFailure(error, kind: policy.classify(error))
                    if failure.kind == .unauthorized { reportUnauthorized(failure) }
                    await events(.sendFailed(outgoing.id, attempt: outgoing.attempt, failure))
                }
            },
            // The deadline of the attempt in flight: a send that hangs is given up as transient.
            .react(query: { state in policy.requestTimeout == nil ? nil : state.outgoing }) { outgoing, events in
                guard let timeout = policy.requestTimeout, (try? await clock.sleep(for: timeout)) != nil else { return }
                let failure = ResourceFailure(RequestTimeoutError(timeout: timeout), kind: .transient(retryAfter: nil))
                await events(.sendFailed(outgoing.id, attempt: outgoing.attempt, failure))
            },
            // The oldest unanswered mutation's maximum age: past it, it is held, not dropped.
            .react(query: { state in policy.maximumMutationAge == nil ? nil : state.expiry }) { expiry, events in
                guard let maximumAge = policy.maximumMutationAge else { return }
                let age = Duration.seconds(now().timeIntervalSince(expiry.queuedAt))
                if age < maximumAge {
                    guard (try? await clock.sleep(for: maximumAge - age)) != nil else { return }
                }
                await events(.expired(expiry.id))
            },
            .react(query: \.backoff) { waiting, events in
                guard let backoff = waiting.backoff, (try? await clock.sleep(for: backoff)) != nil else { return }
                await events(.retryDue(waiting.id))
            },
            .react(query: { _ in true }) { _, send in
                await statuses { status in await send(.resourceChanged(status)) }
            },
        ] + persistence(store)
    }

    /// Saves the queue and the confirmed value each time they change, once the stored ones were
    /// loaded. A newer one cancels a save in progress and saves itself.
    private static func persistence(_ store: (any MutationStore<M>)?) -> [Feedback<OptimisticMachine, Event>] {
        guard let store else { return [] }
        return [
            .react(query: { $0.isRestored ? SavedQueue(queue: $0.queue) : nil }) { saved, _ in
                try? await store.save(saved.queue)
            },
            .react(query: { state in state.isRestored ? state.confirmed.map(SavedConfirmed.init) : nil }) { saved, _ in
                try? await store.saveConfirmed(saved.value)
            },
        ]
    }
}

/// A confirmed value to save, compared by version and last mutation id only.
struct SavedConfirmed<Value: Sendable>: Equatable, Sendable {
    let value: Versioned<Value>

    static func == (lhs: SavedConfirmed, rhs: SavedConfirmed) -> Bool {
        lhs.value.version == rhs.value.version && lhs.value.lastMutationID == rhs.value.lastMutationID
    }
}

/// The identity of a queue for change detection: ids and statuses, in order.
struct QueueEntry: Equatable, Sendable {
    let id: MutationID
    let status: MutationStatus

    init<M: Mutation>(_ pending: PendingMutation<M>) {
        id = pending.id
        status = pending.status
    }
}

/// A queue to save, compared by ids and statuses only.
struct SavedQueue<M: Mutation>: Equatable, Sendable {
    let queue: [PendingMutation<M>]

    static func == (lhs: SavedQueue, rhs: SavedQueue) -> Bool {
        lhs.queue.map(QueueEntry.init) == rhs.queue.map(QueueEntry.init)
    }
}

extension RefusedMutation: Equatable where M: Equatable {
    public static func == (lhs: RefusedMutation, rhs: RefusedMutation) -> Bool {
        lhs.id == rhs.id && lhs.mutation == rhs.mutation && lhs.error == rhs.error
    }
}

extension OptimisticMachine: Equatable where M: Equatable, M.Value: Equatable {
    static func == (lhs: OptimisticMachine, rhs: OptimisticMachine) -> Bool {
        lhs.confirmed == rhs.confirmed && lhs.resource.looksLike(rhs.resource) && lhs.queue == rhs.queue
            && lhs.refusals == rhs.refusals && lhs.isRestored == rhs.isRestored && lhs.client == rhs.client
            && lhs.attempt == rhs.attempt && lhs.blockedSession == rhs.blockedSession && lhs.sentInSession == rhs.sentInSession
            && lhs.lastQueued == rhs.lastQueued && lhs.sendFailure == rhs.sendFailure && lhs.discarded == rhs.discarded
            && lhs.earlierLaunch == rhs.earlierLaunch && lhs.held == rhs.held && lhs.tookValueBeforeAnswers == rhs.tookValueBeforeAnswers
    }
}
extension OptimisticMachine.Event: Equatable where M: Equatable, M.Value: Equatable {}
