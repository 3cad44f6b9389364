/// Sends events to a system from any isolation, hopping to the system's actor; holds the system
/// weakly, so a handle kept by an inspector does not keep a released system alive.
package struct SystemDispatcher<Event: Sendable>: Sendable {
    private let perform: @Sendable (Event) async -> Bool

    init<State>(core: SystemCore<State, Event>) {
        perform = { [weak core] event in
            guard let core else { return false }
            return await run(on: core.isolation) {
                guard !core.isStopped else { return false }
                core.enqueue(event, origin: nil)
                return true
            }
        }
    }

    /// Sends `event` as ``System/send(_:fileID:line:)`` would; `false` when the system is gone or stopped.
    @discardableResult
    package func send(_ event: Event) async -> Bool {
        await perform(event)
    }
}
