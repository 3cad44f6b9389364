/// Watches a ``System`` from the inside: every event it reduces, with the state that resulted,
/// every event it discards, and every effect it starts, cancels and sees finish. For debugging,
/// logging, analytics and inspectors.
///
/// A system without a monitor pays one `nil` check per event. With one, every method is called
/// synchronously on the system's actor while the event is processed, before observers are
/// notified, so keep them fast; they must not send events.
public protocol SystemMonitor<State, Event> {
    associatedtype State
    associatedtype Event

    /// `event` was reduced and `state` is the result.
    func system(didReduce event: Event, source: EventSource, into state: State)

    /// `event`, sent from `location` in the app's code, was reduced and `state` is the result.
    /// By default, the same as ``system(didReduce:source:into:)`` with ``EventSource/sent``.
    func system(didReduce event: Event, sentFrom location: SentFrom, into state: State)

    /// `event` was not reduced, for `reason`.
    func system(didDiscard event: Event, reason: DiscardReason)

    /// An effect started: for `request`, the answer a feedback's query found in the state, or
    /// `nil` for one that no request describes (a binding, a custom loop, a command).
    func system(didStartEffect effect: EffectID, request: (any Sendable)?)

    /// The effect was cancelled: its request changed or went away, or the system stopped. Events
    /// it sends from now on are discarded as stale.
    func system(didCancelEffect effect: EffectID)

    /// The effect's work returned (after a cancellation too, once it noticed).
    func system(didFinishEffect effect: EffectID)
}

extension SystemMonitor {
    /// Does nothing.
    public func system(didReduce event: Event, source: EventSource, into state: State) {}
    /// Calls ``system(didReduce:source:into:)`` with ``EventSource/sent``.
    public func system(didReduce event: Event, sentFrom location: SentFrom, into state: State) {
        system(didReduce: event, source: .sent, into: state)
    }
    /// Does nothing.
    public func system(didDiscard event: Event, reason: DiscardReason) {}
    /// Does nothing.
    public func system(didStartEffect effect: EffectID, request: (any Sendable)?) {}
    /// Does nothing.
    public func system(didCancelEffect effect: EffectID) {}
    /// Does nothing.
    public func system(didFinishEffect effect: EffectID) {}
}

/// One effect of a ``System``, numbered from 1 in the order effects start.
public struct EffectID: Hashable, Sendable, Comparable, CustomStringConvertible {
    /// The effect's number in its system.
    public let rawValue: UInt64

    @usableFromInline
    init(_ origin: OriginID) {
        rawValue = origin.rawValue
    }

    /// An id from its number (for tests and tools that read recorded ids back).
    public init(rawValue: UInt64) {
        self.rawValue = rawValue
    }

    public static func < (lhs: EffectID, rhs: EffectID) -> Bool {
        lhs.rawValue < rhs.rawValue
    }

    public var description: String {
        "effect \(rawValue)"
    }
}

/// Where a reduced event came from.
public enum EventSource: Sendable, Hashable {
    /// Sent with ``System/send(_:fileID:line:)``.
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
