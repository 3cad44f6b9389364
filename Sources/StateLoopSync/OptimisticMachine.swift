import StateLoop

/// The state of an optimistic resource: the server's confirmed value, and the queue of the
/// app's mutations on top of it. The visible value is always derived, never stored, so a
/// rollback cannot restore an old snapshot over newer server data: it removes one mutation and
/// replays the others on the newest confirmed value.
struct OptimisticMachine<M: Mutation>: Sendable {
    /// The newest value the server confirmed (by pull, push or reload).
    var confirmed: Versioned<M.Value>?
    /// The app's mutations, oldest first, not yet contained in `confirmed`.
    var queue: [PendingMutation<M>] = []
    /// Rejections not yet reported, oldest first; the `OptimisticResource` hands them out.
    var failures: [MutationFailure<M>] = []
    /// Set once the stored queue was loaded; nothing is sent before.
    var isRestored = false

    /// The confirmed value with every queued mutation replayed on top, in order.
    var visible: M.Value? {
        confirmed.map { queue.replayed(on: $0.value) }
    }

    /// The mutation to send now: the oldest one the server has not answered. One at a time, in
    /// order: the next one becomes the query's answer only when this one is answered.
    var outgoing: Outgoing? {
        guard isRestored else { return nil }
        return queue.first { if case .confirmed = $0.status { false } else { true } }
            .map { Outgoing(id: $0.id, mutation: $0.mutation) }
    }

    struct Outgoing: Equatable, Sendable {
        let id: MutationID
        let mutation: M

        static func == (lhs: Outgoing, rhs: Outgoing) -> Bool {
            lhs.id == rhs.id
        }
    }

    enum Event: Sendable {
        /// The stored queue, and the stored confirmed value if the store keeps one.
        case restored([PendingMutation<M>], confirmed: Versioned<M.Value>?)
        case confirmedValue(Versioned<M.Value>)
        case mutate(PendingMutation<M>)
        case sending(MutationID)
        case acknowledged(MutationID, Version)
        case rejected(MutationID, ResourceFailure)
        case failuresReported(Int)
    }

    mutating func apply(_ event: Event) {
        switch event {
        case .restored(let stored, let storedConfirmed):
            // A stored value is one more confirmed value: kept only if nothing newer came.
            if let storedConfirmed {
                apply(.confirmedValue(storedConfirmed))
            }
            // Mutations made before the restore finished stay after the stored ones.
            queue = stored.map { pending in
                var pending = pending
                if pending.status == .sent { pending.status = .pending }
                return pending
            } + queue
            isRestored = true
            dropContained()
        case .confirmedValue(let value):
            switch Versioned<M.Value>.outcome(of: value.version, over: confirmed?.version) {
            case .applied, .rebootstrapped:
                confirmed = value
                dropContained()
            case .duplicate, .outdated:
                break
            }
        case .mutate(let pending):
            queue.append(pending)
        case .sending(let id):
            update(id) { $0.status = .sent }
        case .acknowledged(let id, let version):
            update(id) { $0.status = .confirmed(version) }
            dropContained()
        case .rejected(let id, let error):
            guard let index = queue.firstIndex(where: { $0.id == id }) else { return }
            let rejected = queue.remove(at: index)
            failures.append(MutationFailure(id: id, mutation: rejected.mutation, error: error))
        case .failuresReported(let count):
            failures.removeFirst(min(count, failures.count))
        }
    }

    private mutating func update(_ id: MutationID, _ change: (inout PendingMutation<M>) -> Void) {
        if let index = queue.firstIndex(where: { $0.id == id }) {
            change(&queue[index])
        }
    }

    /// Drops the acknowledged mutations that the confirmed value already contains.
    private mutating func dropContained() {
        guard let version = confirmed?.version else { return }
        queue.removeAll { pending in
            if case .confirmed(let acknowledged) = pending.status { acknowledged <= version } else { false }
        }
    }

    static func reduce(_ state: inout OptimisticMachine, _ event: Event) {
        state.apply(event)
    }

    /// Sends the outgoing mutation, saves the queue whenever it changes, and loads the stored
    /// queue at start.
    static func feedbacks(
        send: @escaping @Sendable (M, MutationID) async throws -> Version,
        store: (any MutationStore<M>)?,
        policy: ResourcePolicy,
        clock: any Clock<Duration>,
        confirmedValues: @escaping @Sendable (@escaping @Sendable (Versioned<M.Value>) async -> Void) async -> Void
    ) -> [Feedback<OptimisticMachine, Event>] {
        [
            .react(query: { _ in true }) { _, send in
                let stored = (try? await store?.load()) ?? []
                let confirmed = try? await store?.loadConfirmed()
                await send(.restored(stored, confirmed: confirmed ?? nil))
            },
            .react(query: \.outgoing) { outgoing, events in
                await events(.sending(outgoing.id))
                // Transient failures (a timeout, a 503) are retried with the same mutation id,
                // which a server that honours ids applies once; anything else rejects it.
                var retry = 0
                while true {
                    do {
                        let version = try await send(outgoing.mutation, outgoing.id)
                        await events(.acknowledged(outgoing.id, version))
                        return
                    } catch {
                        let kind = policy.classify(error)
                        guard case .transient(let retryAfter) = kind, retry < policy.maxRetries else {
                            await events(.rejected(outgoing.id, ResourceFailure(error, kind: kind)))
                            return
                        }
                        retry += 1
                        let wait = retryAfter ?? policy.jitter(policy.backoff(beforeRetry: retry))
                        guard (try? await clock.sleep(for: wait)) != nil else { return }
                    }
                }
            },
            .react(query: { _ in true }) { _, send in
                await confirmedValues { value in await send(.confirmedValue(value)) }
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

/// A confirmed value to save, compared by version only.
struct SavedConfirmed<Value: Sendable>: Equatable, Sendable {
    let value: Versioned<Value>

    static func == (lhs: SavedConfirmed, rhs: SavedConfirmed) -> Bool {
        lhs.value.version == rhs.value.version
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

extension MutationFailure: Equatable where M: Equatable {
    public static func == (lhs: MutationFailure, rhs: MutationFailure) -> Bool {
        lhs.id == rhs.id && lhs.mutation == rhs.mutation && lhs.error == rhs.error
    }
}

extension OptimisticMachine: Equatable where M: Equatable, M.Value: Equatable {}
extension OptimisticMachine.Event: Equatable where M: Equatable, M.Value: Equatable {}
