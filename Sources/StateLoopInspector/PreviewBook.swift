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
        /// How to reduce kept events again from a kept state in each attached system: the
        /// states they lead to, `nil` when the system is gone or the values are not its own.
        var replayers: [String: @Sendable (any Sendable, [any Sendable]) async -> [any Encodable & Sendable]?] = [:]
    }

    private let state = Mutex(State())

    /// Registers how to show a kept state of the system named `name`.
    func register(_ name: String, _ show: @escaping @Sendable ((any Sendable)?) async -> Bool) {
        state.withLock { $0.previewers[name] = show }
    }

    /// Registers how to reduce kept events again in the system named `name`.
    func registerReplay(_ name: String, _ replay: @escaping @Sendable (any Sendable, [any Sendable]) async -> [any Encodable & Sendable]?) {
        state.withLock { $0.replayers[name] = replay }
    }

    /// The states `system`'s kept events after record `sequence` lead to without it, from the
    /// state kept before it (`entries`: the buffer's, oldest first), encoded with `encoder`'s
    /// redaction; or why not.
    func recompute(skipping sequence: UInt64, in system: String, entries: [RecordBuffer.Entry], encoder: RecordEncoder) async -> Recomputed {
        func refused(_ problem: String) -> Recomputed { Recomputed(system: system, skipped: sequence, problem: problem) }
        guard let replay = state.withLock({ $0.replayers[system] }) else { return refused("no system named \(system) is attached") }
        let own = entries.filter { $0.system == system }
        guard let index = own.firstIndex(where: { $0.sequence == sequence }), own[index].kind == .reduced else {
            return refused("record \(sequence) of \(system) is not an event it reduced, or is no longer in the app's buffer")
        }
        guard let before = own[..<index].last(where: { ($0.kind == .reduced || $0.kind == .attached) && $0.state != nil })?.state else {
            return refused("the app's buffer no longer holds the state before record \(sequence): its events cannot be reduced again")
        }
        let later = own[(index + 1)...].filter { $0.kind == .reduced && $0.event != nil }
        let kept = Array(later.prefix(Recomputed.limit))
        guard let states = await replay(before, kept.compactMap(\.event)), states.count == kept.count else {
            return refused("\(system) has stopped, or its recorded values are not its own")
        }
        let steps = zip(kept, states).map { entry, state in
            Recomputed.Step(sequence: entry.sequence, state: encoder.redaction.apply(to: RecordEncoder.json(of: state)))
        }
        return Recomputed(system: system, skipped: sequence, states: steps, truncated: later.count > kept.count ? true : nil)
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
