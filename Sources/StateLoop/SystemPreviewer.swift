/// Shows a preview in a system from any isolation (``System/showPreview(_:)``), hopping to the
/// system's actor; holds the system weakly, so a handle kept by an inspector does not keep a
/// released system alive.
package struct SystemPreviewer<State: Sendable>: Sendable {
    private let perform: @Sendable (State?) async -> Bool

    init<Event>(core: SystemCore<State, Event>) {
        perform = { [weak core] state in
            guard let core else { return false }
            return await run(on: core.isolation) {
                guard !core.isStopped else { return false }
                core.showPreview(state)
                return true
            }
        }
    }

    /// Shows `state`, or the live state again when `nil`; `false` when the system is gone or
    /// stopped.
    @discardableResult
    package func show(_ state: State?) async -> Bool {
        await perform(state)
    }
}
