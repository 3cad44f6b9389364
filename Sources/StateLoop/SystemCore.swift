import DequeModule

/// The engine behind a ``System``: the state, the queue of events, the feedback loops and the
/// effects they run.
///
/// Ownership and threading: a core is created on its system's actor (`isolation`) and all of its
/// stored properties are read and written only there, synchronously. It is `@unchecked Sendable`
/// for one reason: effect tasks hold it so that they can hop back through
/// ``receive(_:from:senderCancelled:)``, the only member that may be called from elsewhere.
///
/// Lifetime: the owning ``System`` stops the core when it is released. Running effects hold the
/// core strongly until they finish, and stopping cancels them, so a stopped core is freed as soon
/// as its last effect has returned. Nothing the core owns points back at the ``System``.
@usableFromInline
final class SystemCore<State: Sendable, Event: Sendable>: @unchecked Sendable {
    @usableFromInline let isolation: any Actor
    private let effectExecutor: (any TaskExecutor)?
    @usableFromInline let reduce: (inout State, Event) -> Void
    // Unchecked exclusivity on the hot properties: all access is serial on the system's actor,
    // and the dynamic checks cost more than the rest of an idle event's work.
    @usableFromInline @exclusivity(unchecked) var state: State
    @usableFromInline @exclusivity(unchecked) var loops: [RunningLoop<State>] = []
    private let feedbacks: [Feedback<State, Event>]
    @usableFromInline @exclusivity(unchecked) var observers: [Observer] = []
    @usableFromInline @exclusivity(unchecked) var pending = Deque<PendingEvent>()
    @usableFromInline @exclusivity(unchecked) var isDraining = false
    @usableFromInline @exclusivity(unchecked) var isStopped = false
    /// Origins whose events are still accepted. An origin leaves this set when its effect is
    /// cancelled, and that is what makes its later events stale.
    @usableFromInline @exclusivity(unchecked) var liveOrigins: Set<OriginID> = []
    /// Tasks that have not returned yet, cancelled or not.
    private var tasks: [OriginID: Task<Void, Never>] = [:]
    private var lastOrigin: UInt64 = 0
    private var lastObserver: UInt64 = 0
    @usableFromInline let monitor: (any SystemMonitor<State, Event>)?
    /// A past state shown to observers and UI loops in place of the live one (the inspector's
    /// time travel), while ``isPreviewing``; the live state goes on changing underneath.
    var preview: State?
    /// Whether ``preview`` is shown: a flag of its own, so that the hot path tests a `Bool`
    /// rather than a generic optional.
    @usableFromInline @exclusivity(unchecked) var isPreviewing = false
    /// Set for a journaled system: events are then committed before their states are shown.
    @usableFromInline let recorder: (any EventRecorder<State, Event>)?

    init(
        initialState: State,
        reduce: @escaping (inout State, Event) -> Void,
        feedbacks: [Feedback<State, Event>],
        monitor: (any SystemMonitor<State, Event>)?,
        recorder: (any EventRecorder<State, Event>)?,
        effectExecutor: (any TaskExecutor)?,
        isolation: any Actor
    ) {
        self.state = initialState
        self.reduce = reduce
        self.feedbacks = feedbacks
        self.monitor = monitor
        self.recorder = recorder
        self.effectExecutor = effectExecutor
        self.isolation = isolation
    }

    /// Shows the initial state to every feedback loop. Separate from `init` so that a loop that
    /// starts an effect at once sees a fully built core.
    func start() {
        loops = feedbacks.map { $0.start(state, self) }
    }

    /// Number of effect tasks that have not returned yet, cancelled ones included.
    var runningTaskCount: Int { tasks.count }

    // MARK: Events

    /// Reduces `event` now, or queues it when the core is already reducing or notifying (an
    /// observer or a loop that sends). Draining is a loop, never recursion, so a chain of events
    /// that each cause the next runs in constant stack space.
    @inlinable
    func enqueue(_ event: Event, origin: OriginID?, sentFrom location: SentFrom? = nil) {
        if isStopped {
            monitor?.system(didDiscard: event, reason: .stopped)
            return
        }
        if isDraining {
            pending.append(PendingEvent(event: event, origin: origin, sentFrom: location))
            return
        }
        isDraining = true
        if recorder == nil {
            process(event, origin: origin, sentFrom: location)
            drainPending()
        } else {
            pending.append(PendingEvent(event: event, origin: origin, sentFrom: location))
            drainRecorded()
        }
        isDraining = false
    }

    /// Queues every event of `events`, then reduces them in order, before any event they cause.
    func enqueue(contentsOf events: some Sequence<Event>, sentFrom location: SentFrom? = nil) {
        if isStopped {
            for event in events {
                monitor?.system(didDiscard: event, reason: .stopped)
            }
            return
        }
        for event in events {
            pending.append(PendingEvent(event: event, origin: nil, sentFrom: location))
        }
        guard !isDraining else { return }
        isDraining = true
        drain()
        isDraining = false
    }

    /// Drains the queue the way this system needs: journaled systems commit before showing.
    @inlinable
    func drain() {
        if recorder == nil {
            drainPending()
        } else {
            drainRecorded()
        }
    }

    @inlinable
    func drainPending() {
        while let next = pending.popFirst() {
            process(next.event, origin: next.origin, sentFrom: next.sentFrom)
        }
    }

    @inlinable
    func process(_ event: Event, origin: OriginID?, sentFrom location: SentFrom?) {
        // Checked here, not when the event was queued: the event ahead of this one may have
        // cancelled its effect.
        if let origin, !liveOrigins.contains(origin) {
            monitor?.system(didDiscard: event, reason: .stale)
            return
        }
        reduce(&state, event)
        if let monitor { Self.tell(monitor, reduced: event, origin: origin, sentFrom: location, into: state) }
        publish()
    }

    /// Tells `monitor` of a reduced event: where it was sent from, or that an effect sent it.
    @inlinable
    static func tell(
        _ monitor: any SystemMonitor<State, Event>, reduced event: Event, origin: OriginID?, sentFrom location: SentFrom?, into state: State
    ) {
        if origin == nil, let location {
            monitor.system(didReduce: event, sentFrom: location, into: state)
        } else {
            monitor.system(didReduce: event, source: origin == nil ? .sent : .effect, into: state)
        }
    }

    /// Shows `state` to every loop, then to every observer.
    @inlinable
    func publish() {
        if _slowPath(isPreviewing) {
            publishBehindPreview()
            return
        }
        // Local copies, so that a loop or observer that stops the system or cancels a
        // subscription mutates the stored arrays, not the ones being walked; walked through
        // buffers, because iterating by value would retain and release both closures of every
        // loop and observer on every event.
        let state = self.state
        let loops = self.loops
        let observers = self.observers
        loops.withUnsafeBufferPointer { loops in
            for index in loops.indices {
                loops[index].update(state)
            }
        }
        observers.withUnsafeBufferPointer { observers in
            for index in observers.indices {
                observers[index].notify(state)
            }
        }
    }

    /// Drains the queue of a journaled system. A run of sent events is reduced and recorded
    /// event by event, committed once, then shown state by state; reducing the whole run first
    /// changes nothing anyone can see, because a sent event is never stale and the events that
    /// showing a state causes are queued behind the run either way. An event from an effect is
    /// committed and shown on its own, since whether it is stale depends on every state before
    /// it having been shown.
    @usableFromInline
    func drainRecorded() {
        guard let recorder else { return }
        // Allocated only by a run of two or more sent events.
        var states: [State] = []
        while !isStopped, let next = pending.popFirst() {
            if let origin = next.origin, !liveOrigins.contains(origin) {
                monitor?.system(didDiscard: next.event, reason: .stale)
                continue
            }
            reduceAndRecord(next, into: recorder)
            guard next.origin == nil, let following = pending.first, following.origin == nil else {
                recorder.commit()
                publish()
                continue
            }
            states.append(state)
            while let sent = pending.first, sent.origin == nil {
                pending.removeFirst()
                reduceAndRecord(sent, into: recorder)
                states.append(state)
            }
            recorder.commit()
            let latest = state
            for shown in states where !isStopped {
                // `state` follows what is being shown, so that an observer attached meanwhile
                // starts from the state its next notification follows.
                state = shown
                publish()
            }
            state = latest
            states.removeAll(keepingCapacity: true)
        }
    }

    @inlinable
    func reduceAndRecord(_ next: PendingEvent, into recorder: any EventRecorder<State, Event>) {
        reduce(&state, next.event)
        if let monitor { Self.tell(monitor, reduced: next.event, origin: next.origin, sentFrom: next.sentFrom, into: state) }
        recorder.record(next.event, producing: state)
    }

    /// The entry point for events coming back from effects and commands, from any isolation.
    @usableFromInline
    func receive(_ event: Event, from origin: OriginID, senderCancelled: Bool) async {
        await perform(on: isolation) {
            if senderCancelled {
                self.monitor?.system(didDiscard: event, reason: .stale)
            } else {
                self.enqueue(event, origin: origin)
            }
        }
    }

    // MARK: Effects

    @discardableResult
    @usableFromInline
    func spawn<Request: Sendable>(
        endsWhenFinished: Bool,
        request: Request?,
        _ operation: @escaping @Sendable (Send<Event>) async -> Void
    ) -> OriginID {
        lastOrigin &+= 1
        let origin = OriginID(rawValue: lastOrigin)
        guard !isStopped else { return origin }
        liveOrigins.insert(origin)
        monitor?.system(didStartEffect: EffectID(origin), request: request)
        let send = Send(receiver: self, origin: origin)
        tasks[origin] = Task(executorPreference: effectExecutor) {
            await operation(send)
            await perform(on: self.isolation) {
                self.taskReturned(origin, endsOrigin: endsWhenFinished)
            }
        }
        return origin
    }

    /// The task running `origin`, or a finished one when the core had stopped.
    func task(for origin: OriginID) -> Task<Void, Never> {
        tasks[origin] ?? Task {}
    }

    @usableFromInline
    func cancel(_ origin: OriginID) {
        if liveOrigins.remove(origin) != nil {
            monitor?.system(didCancelEffect: EffectID(origin))
        }
        tasks[origin]?.cancel()
    }

    private func taskReturned(_ origin: OriginID, endsOrigin: Bool) {
        tasks[origin] = nil
        if endsOrigin {
            liveOrigins.remove(origin)
        }
        monitor?.system(didFinishEffect: EffectID(origin))
    }

    // MARK: Observers

    func addObserver(_ notify: @escaping (State) -> Void, onStop: (() -> Void)? = nil) -> UInt64 {
        lastObserver &+= 1
        observers.append(Observer(id: lastObserver, notify: notify, onStop: onStop))
        return lastObserver
    }

    /// Registers `notify` and calls it with the current state at once. Events it sends from that
    /// first call are queued like those sent from any notification, so the observer never runs
    /// inside itself.
    func attachObserver(_ notify: @escaping (State) -> Void) -> UInt64 {
        let id = addObserver(notify)
        guard !isDraining else {
            notify(shownState)
            return id
        }
        isDraining = true
        notify(shownState)
        drain()
        isDraining = false
        return id
    }

    func removeObserver(_ id: UInt64) {
        observers.removeAll { $0.id == id }
    }

    // MARK: Preview

    /// What observers and UI loops are shown: the preview while there is one, else the state.
    var shownState: State {
        isPreviewing ? preview ?? state : state
    }

    /// Shows `shown` to every observer and UI loop in place of the live state, or the live state
    /// again when `shown` is `nil`. Reducing, effects and every other loop go on with the live
    /// state; events observers send meanwhile are reduced as usual.
    func showPreview(_ shown: State?) {
        guard !isStopped else { return }
        preview = shown
        isPreviewing = shown != nil
        let visible = shownState
        let wasDraining = isDraining
        isDraining = true
        for loop in loops where loop.showsState {
            loop.update(visible)
        }
        for observer in observers {
            observer.notify(visible)
        }
        if !wasDraining {
            drain()
            isDraining = false
        }
    }

    /// ``publish()`` while a preview is shown: only the loops that do not display states see
    /// the new live state.
    @usableFromInline
    func publishBehindPreview() {
        let state = self.state
        for loop in loops where !loop.showsState {
            loop.update(state)
        }
    }

    // MARK: Lifetime

    /// Cancels every effect, stops every loop and finishes every state stream. Idempotent.
    func stop() {
        guard !isStopped else { return }
        isStopped = true
        pending.removeAll()
        let stoppedLoops = loops
        loops = []
        for loop in stoppedLoops {
            loop.stop()
        }
        if let monitor {
            for origin in liveOrigins.sorted(by: { $0.rawValue < $1.rawValue }) {
                monitor.system(didCancelEffect: EffectID(origin))
            }
        }
        liveOrigins.removeAll()
        for task in tasks.values {
            task.cancel()
        }
        let stoppedObservers = observers
        observers = []
        for observer in stoppedObservers {
            observer.onStop?()
        }
    }
}

extension SystemCore: EventReceiver, EffectHost {}

extension SystemCore {
    @usableFromInline
    struct PendingEvent {
        @usableFromInline let event: Event
        @usableFromInline let origin: OriginID?
        /// Where a sent event was sent from, for the monitor.
        @usableFromInline let sentFrom: SentFrom?

        @inlinable
        init(event: Event, origin: OriginID?, sentFrom: SentFrom? = nil) {
            self.event = event
            self.origin = origin
            self.sentFrom = sentFrom
        }
    }

    @usableFromInline
    struct Observer {
        @usableFromInline let id: UInt64
        @usableFromInline let notify: (State) -> Void
        @usableFromInline let onStop: (() -> Void)?

        @inlinable
        init(id: UInt64, notify: @escaping (State) -> Void, onStop: (() -> Void)?) {
            self.id = id
            self.notify = notify
            self.onStop = onStop
        }
    }
}
