import StateLoopInspectorWire
import Synchronization

/// The systems that accept events from the inspector's page (``InspectorMonitor/acceptEvents(into:)``),
/// and how each takes one: it decodes the event and sends it, or says why it could not.
///
/// Threading: a mutex guards the book; sending hops to each system's actor.
final class DispatchBook: Sendable {
    private let dispatchers = Mutex<[String: @Sendable (JSONValue) async -> String?]>([:])

    /// Registers how the system named `name` takes an event: `nil`, or the problem.
    func register(_ name: String, _ take: @escaping @Sendable (JSONValue) async -> String?) {
        dispatchers.withLock { $0[name] = take }
    }

    /// Sends `event` to `system`; returns what became of it.
    func dispatch(_ event: JSONValue, to system: String) async -> DispatchStatus {
        guard let take = dispatchers.withLock({ $0[system] }) else {
            return DispatchStatus(
                system: system,
                problem: "\(system) does not accept events from the inspector: call acceptEvents(into:) on its monitor (development builds only)")
        }
        return DispatchStatus(system: system, problem: await take(event))
    }
}
