import StateLoopInspectorWire
import Synchronization

/// The systems an inspector may show past states in, and what each shows now. A preview ends
/// when the inspector asks, when the connection that asked for it ends, or at ``Inspector/disconnect()``:
/// an app never stays on a past state with no inspector to bring it back.
///
/// Threading: a mutex guards the book; showing hops to each system's actor.
final class PreviewBook: Sendable {
    private struct State {
        /// How to show a kept state in each attached system, by name.
        var previewers: [String: @Sendable ((any Sendable)?) async -> Bool] = [:]
        /// The record each system shows, for those that show a past one.
        var showing: [String: UInt64] = [:]
    }

    private let state = Mutex(State())

    /// Registers how to show a kept state of the system named `name`.
    func register(_ name: String, _ show: @escaping @Sendable ((any Sendable)?) async -> Bool) {
        state.withLock { $0.previewers[name] = show }
    }

    /// Shows, in `system`, the state kept with record `sequence` (`state`, `nil` when the buffer
    /// no longer holds it); returns what the system shows now. A failure leaves the system as
    /// it was, and says which record it still shows, if any.
    func show(_ sequence: UInt64, state kept: (any Sendable)?, in system: String) async -> PreviewStatus {
        let (show, showing) = state.withLock { ($0.previewers[system], $0.showing[system]) }
        guard let show else {
            return PreviewStatus(system: system, sequence: showing, problem: "no system named \(system) is attached")
        }
        guard let kept else {
            return PreviewStatus(
                system: system, sequence: showing, problem: "record \(sequence) of \(system) is no longer in the app's buffer, or holds no state")
        }
        guard await show(kept) else {
            state.withLock { _ = $0.showing.removeValue(forKey: system) }
            return PreviewStatus(system: system, sequence: nil, problem: "\(system) has stopped")
        }
        state.withLock { $0.showing[system] = sequence }
        return PreviewStatus(system: system, sequence: sequence)
    }

    /// Shows `system`'s live state again.
    func end(_ system: String) async -> PreviewStatus {
        let show = state.withLock { state in
            state.showing[system] = nil
            return state.previewers[system]
        }
        guard let show else {
            return PreviewStatus(system: system, sequence: nil, problem: "no system named \(system) is attached")
        }
        _ = await show(nil)
        return PreviewStatus(system: system, sequence: nil)
    }

    /// Shows every system's live state again.
    func endAll() async {
        let shows = state.withLock { state in
            defer { state.showing = [:] }
            return state.showing.keys.compactMap { state.previewers[$0] }
        }
        for show in shows { _ = await show(nil) }
    }
}
