/// Watches a ``System`` from the inside: every event it reduces, with the state that resulted,
/// and every event it discards. For debugging, logging and analytics.
///
/// A system without a monitor pays one `nil` check per event. With one, both methods are called
/// synchronously on the system's actor while the event is processed, before observers are
/// notified, so keep them fast; they must not send events.
public protocol SystemMonitor<State, Event> {
    associatedtype State
    associatedtype Event

    /// `event` was reduced and `state` is the result.
    func system(didReduce event: Event, source: EventSource, into state: State)

    /// `event` was not reduced, for `reason`.
    func system(didDiscard event: Event, reason: DiscardReason)
}

extension SystemMonitor {
    /// Does nothing.
    public func system(didReduce event: Event, source: EventSource, into state: State) {}
    /// Does nothing.
    public func system(didDiscard event: Event, reason: DiscardReason) {}
}

/// Where a reduced event came from.
public enum EventSource: Sendable, Hashable {
    /// Sent with ``System/send(_:)``.
    case sent
    /// Sent back by an effect of a feedback loop, or by a command.
    case effect
}

/// Why a system did not reduce an event.
public enum DiscardReason: Sendable, Hashable {
    /// The effect that sent it had been cancelled: its request changed or went away, or its
    /// task was cancelled.
    case stale
    /// The system had stopped.
    case stopped
}
