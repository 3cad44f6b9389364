import Logging
import StateLoop

/// A `SystemMonitor` (StateLoop) that writes every reduced and discarded event to a swift-log `Logger`.
///
/// ```swift
/// let system = System(
///     initialState: Search(),
///     reduce: Search.reduce,
///     monitor: LoggingMonitor(logger: Logger(label: "search"))
/// )
/// ```
///
/// Reduced events are logged at `level` (`.debug` by default) with the event and the resulting
/// state as metadata; discarded events at `.trace`, since discarding stale events is normal.
/// Nothing is formatted when the logger's level filters the message out.
public struct LoggingMonitor<State, Event>: SystemMonitor {
    private let logger: Logger
    private let level: Logger.Level
    private let includeState: Bool

    /// - Parameters:
    ///   - logger: Where to log.
    ///   - level: The level of the line for each reduced event.
    ///   - includeState: Whether to add the resulting state to each line; turn it off for large
    ///     states or states holding personal data.
    public init(logger: Logger, level: Logger.Level = .debug, includeState: Bool = true) {
        self.logger = logger
        self.level = level
        self.includeState = includeState
    }

    public func system(didReduce event: Event, source: EventSource, into state: State) {
        guard logger.logLevel <= level else { return }
        var metadata: Logger.Metadata = [
            "event": "\(event)",
            "source": "\(source)",
        ]
        if includeState {
            metadata["state"] = "\(state)"
        }
        logger.log(level: level, "reduced event", metadata: metadata)
    }

    public func system(didDiscard event: Event, reason: DiscardReason) {
        logger.trace("discarded event", metadata: ["event": "\(event)", "reason": "\(reason)"])
    }
}
