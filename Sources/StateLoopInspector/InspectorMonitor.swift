import Foundation
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
    /// lets the inspector show the system's past states (a preview) and the states its events
    /// would have led to without one of them (a skip, reduced again on the system's actor,
    /// nothing run and its state untouched): call it right after creating the system (a
    /// journaled system's state is the restored one).
    public func attach(to system: System<State, Event>) {
        inspector.keep(.attached, system: name, event: nil, state: system.state, detail: .none)
        let previewer = system.previewer
        inspector.previews.register(name) { kept in
            guard let kept else { return await previewer.show(nil) }
            guard let state = kept as? State else { return false }
            return await previewer.show(state)
        }
        let replayer = system.replayer
        inspector.previews.registerReplay(name) { kept, events in
            guard let state = kept as? State else { return nil }
            let typed = events.compactMap { $0 as? Event }
            guard typed.count == events.count else { return nil }
            return await replayer.states(from: state, reducing: typed)
        }
    }

    /// Lets the inspector's page send events to `system`: an event the page sends is decoded
    /// as `Event` from its `Codable` JSON and sent, as the app would send it, and recorded like
    /// any other. For development builds only: anyone with the inspector's token can then
    /// change what the app holds. Holds the system weakly.
    public func acceptEvents(into system: System<State, Event>) where Event: Decodable {
        let dispatcher = system.dispatcher
        inspector.dispatchers.register(name) { [name] json in
            let event: Event
            do {
                event = try JSONDecoder().decode(Event.self, from: JSONEncoder().encode(json))
            } catch {
                return "the JSON is not an event of \(name) (\(Event.self)): \(error)"
            }
            return await dispatcher.send(event) ? nil : "\(name) has stopped"
        }
    }

    public func system(didReduce event: Event, source: EventSource, into state: State) {
        inspector.keep(.reduced, system: name, event: event, state: state, detail: .sent(source == .sent))
    }

    public func system(didReduce event: Event, sentFrom location: SentFrom, into state: State) {
        inspector.keep(.reduced, system: name, event: event, state: state, detail: .sentFrom(location))
    }

    public func system(didDiscard event: Event, reason: DiscardReason) {
        inspector.keep(.discarded, system: name, event: event, state: nil, detail: .stale(reason == .stale))
    }

    public func system(didStartEffect effect: EffectID, request: (any Sendable)?) {
        // Kept as the value (what the effect started for); described through reflection and
        // redacted like any event when the record is encoded, off the system's actor.
        inspector.keep(.effectStarted, system: name, event: nil, state: nil, detail: .effect(effect.rawValue, request: request))
    }

    public func system(didCancelEffect effect: EffectID) {
        inspector.keep(.effectCancelled, system: name, event: nil, state: nil, detail: .effect(effect.rawValue, request: nil))
    }

    public func system(didFinishEffect effect: EffectID) {
        inspector.keep(.effectFinished, system: name, event: nil, state: nil, detail: .effect(effect.rawValue, request: nil))
    }
}
