/// One feature's single source of truth: a state, a pure reducer, and the feedback loops that
/// observe the state and run effects.
///
/// ```swift
/// let search = System(
///     initialState: Search(),
///     reduce: Search.reduce,
///     feedbacks: [
///         .react(query: \.nextPageToLoad) { url in
///             .loaded(try await api.page(url))
///         } catch: { .failed($0) }
///     ]
/// )
/// search.send(.scrolledToBottom)
/// ```
///
/// ## Isolation
/// A system belongs to the actor it is created on (usually `@MainActor` for UI): ``send(_:fileID:line:)``,
/// ``state`` and ``observe(_:)`` are synchronous there, and the compiler keeps the system from
/// leaving that actor because it is not `Sendable`. Effects run off the actor and hop back only
/// to deliver events.
///
/// ## Guarantees
/// - Events are reduced one at a time, in the order they arrive. An event sent while the system
///   is reducing or notifying is queued and reduced after, never re-entrantly.
/// - Once an effect's request changes or goes away, no event from that effect is reduced, even
///   one already on its way.
/// - Every feedback loop and observer sees every state, in order.
/// - Stopping or releasing the system cancels every effect and command.
///
/// See `docs/Architecture.md` for the full guarantees table and the tests behind each row.
public final class System<State: Sendable, Event: Sendable> {
    @usableFromInline let core: SystemCore<State, Event>

    /// Creates and starts a system.
    ///
    /// Every feedback loop sees `initialState` at once, so a state restored from storage restarts
    /// the effects it calls for.
    ///
    /// - Parameters:
    ///   - initialState: The state before any event.
    ///   - reduce: Applies one event to the state. Keep it pure: the same events in the same
    ///     order must give the same states.
    ///   - feedbacks: The loops that observe the state and run effects.
    ///   - monitor: An optional observer of every reduced and discarded event, for logging.
    ///   - isolation: The actor the system belongs to; defaults to the caller's.
    public convenience init(
        initialState: State,
        reduce: @escaping (inout State, Event) -> Void,
        feedbacks: [Feedback<State, Event>] = [],
        monitor: (any SystemMonitor<State, Event>)? = nil,
        isolation: isolated (any Actor)? = #isolation
    ) {
        self.init(
            initialState: initialState,
            reduce: reduce,
            feedbacks: feedbacks,
            monitor: monitor,
            recorder: nil,
            effectExecutor: nil,
            isolation: isolation
        )
    }

    /// Creates a system whose effects run on `effectExecutor` (the test kit passes its own
    /// executor so that it can tell when every effect is waiting) and whose events go through
    /// `recorder` before their states are shown (StateLoopJournal).
    package init(
        initialState: State,
        reduce: @escaping (inout State, Event) -> Void,
        feedbacks: [Feedback<State, Event>],
        monitor: (any SystemMonitor<State, Event>)?,
        recorder: (any EventRecorder<State, Event>)? = nil,
        effectExecutor: (any TaskExecutor)?,
        isolation: isolated (any Actor)?
    ) {
        guard let isolation else {
            preconditionFailure(
                """
                A System must be created on an actor, and it was created from nonisolated code. \
                Create it from a @MainActor context (for UI), inside an actor's method, or pass \
                `isolation:` explicitly.
                """
            )
        }
        core = SystemCore(
            initialState: initialState,
            reduce: reduce,
            feedbacks: feedbacks,
            monitor: monitor,
            recorder: recorder,
            effectExecutor: effectExecutor,
            isolation: isolation
        )
        core.start()
    }

    deinit {
        core.stop()
    }

    /// The current state.
    @inlinable
    public var state: State {
        core.state
    }

    /// Whether ``stop()`` was called. A stopped system ignores events and runs no effect.
    public var isStopped: Bool {
        core.isStopped
    }

    /// The actor the system belongs to.
    package var isolation: any Actor {
        core.isolation
    }

    /// Effect and command tasks that have not returned yet, cancelled ones included.
    package var runningTaskCount: Int {
        core.runningTaskCount
    }

    /// Reduces `event` now, or right after the event being processed when called from an
    /// observer. Returns once the event and everything it queued have been reduced.
    ///
    /// `fileID` and `line` say where the call is, for a monitor (an inspector shows them): leave
    /// them to the compiler, or pass a caller's own to a helper that sends for it.
    @inlinable
    public func send(_ event: Event, fileID: StaticString = #fileID, line: UInt = #line) {
        core.enqueue(event, origin: nil, sentFrom: SentFrom(fileID: fileID, line: line))
    }

    /// Reduces every event of `events` in order, before any event they cause; returns once they
    /// and everything they queued have been reduced. A journaled system commits them in one
    /// transaction, which is how to journal a burst of events quickly.
    public func send(contentsOf events: some Sequence<Event>, fileID: StaticString = #fileID, line: UInt = #line) {
        core.enqueue(contentsOf: events, sentFrom: SentFrom(fileID: fileID, line: line))
    }

    /// Calls `observer` with the current state now and with every new state after, until the
    /// returned subscription is cancelled or released, or the system stops.
    ///
    /// The observer runs synchronously on the system's actor. It may send events; they are
    /// reduced after every observer has seen the current state.
    public func observe(_ observer: @escaping (State) -> Void) -> StateSubscription {
        guard !core.isStopped else {
            observer(core.state)
            return StateSubscription {}
        }
        let id = core.attachObserver(observer)
        return StateSubscription { [weak core] in core?.removeObserver(id) }
    }

    /// The states of the system as an asynchronous sequence: the current state first, then each
    /// new one. A slow consumer skips to the latest state rather than queueing every state.
    /// The sequence finishes when the system stops.
    public var states: AsyncStream<State> {
        let (stream, continuation) = AsyncStream.makeStream(
            of: State.self,
            bufferingPolicy: .bufferingNewest(1)
        )
        continuation.yield(core.shownState)
        guard !core.isStopped else {
            continuation.finish()
            return stream
        }
        let id = core.addObserver(
            { continuation.yield($0) },
            onStop: { continuation.finish() }
        )
        continuation.onTermination = { [weak core] _ in
            guard let core else { return }
            Task { await perform(on: core.isolation) { core.removeObserver(id) } }
        }
        return stream
    }

    /// Runs `command` with a snapshot of the current state. The task it returns can be awaited
    /// or cancelled; a cancelled command can no longer send events.
    @discardableResult
    public func execute<C: Command>(_ command: C) -> Task<Void, Never>
    where C.State == State, C.Event == Event {
        run { state, send in await command.execute(state: state, send: send) }
    }

    /// Runs `body` as a command: with a snapshot of the current state and a ``Send`` for events.
    @discardableResult
    public func run(
        _ body: @escaping @Sendable (State, Send<Event>) async -> Void
    ) -> Task<Void, Never> {
        let snapshot = core.state
        let origin = core.spawn(endsWhenFinished: true) { send in await body(snapshot, send) }
        return core.task(for: origin)
    }

    /// Shows `state` to observers, state streams and UI feedbacks (``Feedback/bind(_:)``) in
    /// place of the live state, until called with `nil`, which shows the live state again: the
    /// inspector's time travel. Nothing else changes: ``state`` stays live, events are reduced,
    /// and every other feedback and its effects go on with the live state. A bind inside a
    /// scoped feedback keeps the live state.
    package func showPreview(_ state: State?) {
        core.showPreview(state)
    }

    /// Whether observers, state streams and UI feedbacks are shown an inspector's preview of a
    /// past state rather than the live one: a UI marks such a frame (a banner, say), since the
    /// user's input still acts on the live state.
    public var isPreviewing: Bool {
        core.isPreviewing
    }

    /// A handle that shows previews from any isolation, without keeping the system alive.
    package var previewer: SystemPreviewer<State> {
        SystemPreviewer(core: core)
    }

    /// A handle that reduces recorded events again from any isolation, without keeping the
    /// system alive or changing its state.
    package var replayer: SystemReplayer<State, Event> {
        SystemReplayer(core: core)
    }

    /// A handle that sends events from any isolation, without keeping the system alive.
    package var dispatcher: SystemDispatcher<Event> {
        SystemDispatcher(core: core)
    }

    /// Cancels every effect and command, stops every feedback loop and finishes every state
    /// stream. Also done when the system is released.
    public func stop() {
        core.stop()
    }
}
