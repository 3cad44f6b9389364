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
    let makeLoop: @Sendable () -> any FeedbackLoop<State, Event>

    init(_ makeLoop: @escaping @Sendable () -> any FeedbackLoop<State, Event>) {
        self.makeLoop = makeLoop
    }
}

/// The running form of a ``Feedback`` inside one system.
///
/// Threading: every method is called on the system's actor, synchronously, while the system
/// processes an event, so a loop keeps plain mutable state and needs no locks. A loop must not
/// send events synchronously; it starts effects through the core, whose events come back later.
protocol FeedbackLoop<State, Event>: AnyObject {
    associatedtype State: Sendable
    associatedtype Event: Sendable

    /// Called once with the state the system starts from.
    func start(_ state: State, in core: SystemCore<State, Event>)
    /// Called with every state after the first, in order.
    func update(_ state: State, in core: SystemCore<State, Event>)
    /// Called once when the system stops; the loop drops whatever it holds. The core cancels
    /// the loop's effects itself.
    func stop()
}
