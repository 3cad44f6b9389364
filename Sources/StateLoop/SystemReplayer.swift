/// Reduces recorded events again with a system's reducer, from any isolation, on the system's
/// actor, without touching the system's state: what an inspector shows when an event is
/// skipped. Holds the system weakly.
package struct SystemReplayer<State: Sendable, Event: Sendable>: Sendable {
    private let perform: @Sendable (State, [Event]) async -> [State]?

    init(core: SystemCore<State, Event>) {
        perform = { [weak core] state, events in
            guard let core else { return nil }
            return await run(on: core.isolation) {
                var state = state
                return events.map { event in
                    core.reduce(&state, event)
                    return state
                }
            }
        }
    }

    /// The states `events` lead to from `state`, one after each; `nil` when the system is gone.
    package func states(from state: State, reducing events: [Event]) async -> [State]? {
        await perform(state, events)
    }
}
