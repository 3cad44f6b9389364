/// One feedback loop of a ``System``: something that observes every state and may run effects
/// whose events flow back into the reducer.
///
/// Build feedbacks with the factory methods:
/// - ``react(query:effects:)-(_,(Request)->Event)`` and its overloads: run one effect per request
///   a query finds in the state.
/// - ``react(queries:effects:)-(_,(Request)->Event)``: run one effect per element of a set.
/// - ``bind(_:events:)``: render every state on the main actor and send UI events back.
/// - ``custom(_:)``: turn the stream of states into a stream of events.
///
/// A `Feedback` value is only a description; each ``System`` it is given to builds its own
/// running loop from it, so one description can serve many systems (and a test).
public struct Feedback<State: Sendable, Event: Sendable>: Sendable {
    /// Builds the running loop for one system and shows it the first state.
    @usableFromInline
    let start: @Sendable (State, any EffectHost<Event>) -> RunningLoop<State>

    /// A feedback from a loop type. Inlinable so that a loop built in the app's module calls
    /// its concrete, specialized `update` on every event, not a generic witness: that is most
    /// of the cost of an idle loop.
    ///
    /// `showsState`: the loop displays states (a UI binding), so a preview of a past state is
    /// shown to it in place of the live one (``System/showPreview(_:)``); every other loop keeps
    /// seeing the live state.
    @inlinable
    init<Loop: FeedbackLoop>(showsState: Bool = false, _ makeLoop: @escaping @Sendable () -> Loop)
    where Loop.State == State, Loop.Event == Event {
        start = { state, host in
            let loop = makeLoop()
            loop.start(state, in: host)
            return RunningLoop(update: { loop.update($0, in: host) }, stop: { loop.stop() }, showsState: showsState)
        }
    }
}

/// A loop running inside one system, as the core calls it on every state.
///
/// Ownership: the closures hold the loop and its host until the system stops and drops them.
@usableFromInline
struct RunningLoop<State> {
    @usableFromInline let update: (State) -> Void
    @usableFromInline let stop: () -> Void
    /// Whether the loop displays states, and so is shown a preview (see `Feedback.init`).
    @usableFromInline let showsState: Bool

    @inlinable
    init(update: @escaping (State) -> Void, stop: @escaping () -> Void, showsState: Bool = false) {
        self.update = update
        self.stop = stop
        self.showsState = showsState
    }
}

/// The running form of a ``Feedback`` inside one system.
///
/// Threading: every method is called on the system's actor, synchronously, while the system
/// processes an event, so a loop keeps plain mutable state and needs no locks. A loop must not
/// send events synchronously; it starts effects through its host, whose events come back later.
@usableFromInline
protocol FeedbackLoop<State, Event>: AnyObject, SendableMetatype {
    associatedtype State: Sendable
    associatedtype Event: Sendable

    /// Called once with the state the loop starts from.
    func start(_ state: State, in host: any EffectHost<Event>)
    /// Called with every state after the first, in order.
    func update(_ state: State, in host: any EffectHost<Event>)
    /// Called once when the loop ends; the loop drops whatever it holds. Whoever ends the loop
    /// cancels its effects.
    func stop()
}

/// What a running feedback loop starts and cancels its effects through: the system's core, or
/// a scope that embeds a child's loops in a parent system.
@usableFromInline
protocol EffectHost<Event>: AnyObject {
    associatedtype Event: Sendable

    /// The actor of the system the effects send back to.
    var isolation: any Actor { get }

    /// Starts `operation` in a new task and returns the origin its events will carry.
    ///
    /// - Parameters:
    ///   - endsWhenFinished: whether the origin stops being live when the operation returns (a
    ///     command), or only when it is cancelled (an effect of a feedback loop, whose request
    ///     may still be current after it returned).
    ///   - request: what the effect was started for (a query's answer), for the monitor; generic
    ///     so that nothing is boxed unless a monitor asks for it.
    @discardableResult
    func spawn<Request: Sendable>(
        endsWhenFinished: Bool,
        request: Request?,
        _ operation: @escaping @Sendable (Send<Event>) async -> Void
    ) -> OriginID

    /// Cancels the effect of `origin`: from now on none of its events is reduced.
    func cancel(_ origin: OriginID)
}

extension EffectHost {
    /// Starts an effect that no request describes (a binding, a custom loop, a command).
    @inlinable
    @discardableResult
    func spawn(endsWhenFinished: Bool, _ operation: @escaping @Sendable (Send<Event>) async -> Void) -> OriginID {
        spawn(endsWhenFinished: endsWhenFinished, request: Never?.none, operation)
    }
}
