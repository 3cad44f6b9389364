import StateLoop
import StateLoopInspectorWire

/// The monitor an ``Inspector`` gives each system it watches: every event reduced or
/// discarded, with the state it produced, and every effect started, cancelled and finished,
/// kept in the inspector's buffer as it happens.
///
/// Threading: called by the system on its actor, synchronously; it only copies values into the
/// buffer (under its lock) and returns.
public struct InspectorMonitor<State: Encodable & Sendable, Event: Encodable & Sendable>: SystemMonitor, Sendable {
    /// The system's name in the session.
    public let name: String
    private let inspector: Inspector

    init(name: String, inspector: Inspector) {
        self.name = name
        self.inspector = inspector
    }

    /// Records the state `system` has now, the one its first recorded event starts from, and
    /// lets the inspector show the system's past states (a preview): call it right after
    /// creating the system (a journaled system's state is the restored one).
    public func attach(to system: System<State, Event>) {
        keep(.attached, state: system.state)
        let previewer = system.previewer
        inspector.registerPreviewer(for: name) { kept in
            guard let kept else { return await previewer.show(nil) }
            guard let state = kept as? State else { return false }
            return await previewer.show(state)
        }
    }

    public func system(didReduce event: Event, source: EventSource, into state: State) {
        keep(.reduced, event: event, state: state) { $0.source = source == .sent ? "sent" : "effect" }
    }

    public func system(didDiscard event: Event, reason: DiscardReason) {
        keep(.discarded, event: event) { $0.reason = reason == .stale ? "stale" : "stopped" }
    }

    public func system(didStartEffect effect: EffectID, request: (any Sendable)?) {
        // The request's readable form is taken now: it is a value of the app's, not `Codable`
        // in general, and what it held is what the effect started for.
        let described = request.map { String(describing: $0) }
        keep(.effectStarted) { record in
            record.effect = effect.rawValue
            record.request = described
        }
    }

    public func system(didCancelEffect effect: EffectID) {
        keep(.effectCancelled) { $0.effect = effect.rawValue }
    }

    public func system(didFinishEffect effect: EffectID) {
        keep(.effectFinished) { $0.effect = effect.rawValue }
    }

    private func keep(
        _ kind: InspectorRecord.Kind, event: Event? = nil, state: State? = nil, _ fill: (inout InspectorRecord) -> Void = { _ in }
    ) {
        var record = InspectorRecord(sequence: 0, time: inspector.now, system: name, kind: kind)
        fill(&record)
        inspector.buffer.append(RecordBuffer.Entry(record: record, event: event, state: state))
    }
}
