import StateLoop

extension System where State: Codable, Event: Codable {
    /// Creates and starts a journaled system: it starts from the state `journal` restored, and
    /// every event is committed to the journal before any feedback loop or observer sees the
    /// state it produced.
    ///
    /// The feedback loops see the restored state first, like any initial state, so the effects
    /// it calls for start again: a half-sent upload resumes without code of its own.
    ///
    /// - Parameters:
    ///   - journal: An opened journal that serves no other system.
    ///   - initialState: The state before any event, when the journal holds no saved state.
    ///   - reduce: Applies one event; also used to replay the journal's events.
    ///   - feedbacks: The loops that observe the state and run effects.
    ///   - monitor: An optional observer of every reduced and discarded event.
    ///   - isolation: The actor the system belongs to; defaults to the caller's.
    public convenience init(
        journal: Journal<State, Event>,
        initialState: State,
        reduce: @escaping (inout State, Event) -> Void,
        feedbacks: [Feedback<State, Event>] = [],
        monitor: (any SystemMonitor<State, Event>)? = nil,
        isolation: isolated (any Actor)? = #isolation
    ) {
        self.init(
            initialState: journal.attach(initialState: initialState, reduce: reduce),
            reduce: reduce,
            feedbacks: feedbacks,
            monitor: monitor,
            recorder: journal,
            effectExecutor: nil,
            isolation: isolation
        )
    }
}
