import Foundation
import Logging
import ServiceLifecycle

/// A server-side change that falls due with time (a driver idle too long goes off duty, an
/// unpaid order is cancelled), made by a service beside the application: it wakes at the next
/// deadline the app's data holds, and makes the change due then in ``SyncServer/update(_:)``,
/// so that it is committed and pushed like any other.
///
/// ```swift
/// let expiry = TimedUpdate("order expiry", on: server, clock: time) { transaction in
///     try earliestExpiry(in: transaction)                      // a read: the next deadline
/// } update: { transaction, now in
///     try cancelOrders(expiredBy: now, in: transaction)        // writes what is due
///     return try earliestExpiry(in: transaction)
/// }
/// let services = ServiceGroup(services: [server.application(port: 8080), expiry, server], …)
/// ```
///
/// Each wake reads first, beside writes rather than queued behind them: most wakes find
/// nothing due and write nothing. It sleeps until an absolute time on its clock, so a deadline
/// that passed while it was busy runs at once rather than a pause later. It wakes at least
/// every `maximumPause`, since a change made elsewhere may bring a nearer deadline than the one
/// it read. A failure (the store away, an error of the app's) is logged as a warning through
/// the server's logger and tried again after `maximumPause`; the service returns only at the
/// group's graceful shutdown or its cancellation, never ending the group by itself.
public struct TimedUpdate<Access: AccessPolicy>: Service {
    private let name: String
    private let server: SyncServer<Access>
    private let clock: WallClock
    private let maximumPause: Duration
    private let nextDeadline: @Sendable (ServerTransaction) throws -> Date?
    private let update: @Sendable (ServerTransaction, Date) throws -> Date?

    /// The shortest pause between two wakes, so that an update that leaves its deadline passed
    /// costs a read a millisecond, not a busy loop.
    static var minimumPause: Duration { .milliseconds(1) }

    /// A timed update named `name` (in its logs) on `server`.
    ///
    /// - Parameters:
    ///   - name: The update's name, given in the warnings it logs.
    ///   - server: The server whose store it reads and updates, and whose logger it logs to.
    ///   - clock: The clock it reads and sleeps on; deadlines are dates on it.
    ///   - maximumPause: The longest it sleeps without reading the next deadline again.
    ///   - nextDeadline: The earliest time something falls due, `nil` for none: read in a
    ///     read-only transaction (``SyncServer/read(_:)``).
    ///   - update: Makes what is due at its `now` (the time the wake read), in
    ///     ``SyncServer/update(_:)``; returns the next deadline, `nil` for none. It runs only
    ///     when `nextDeadline` said something was due.
    public init(
        _ name: String,
        on server: SyncServer<Access>,
        clock: WallClock = WallClock(),
        maximumPause: Duration = .seconds(1),
        nextDeadline: @escaping @Sendable (ServerTransaction) throws -> Date?,
        update: @escaping @Sendable (ServerTransaction, _ now: Date) throws -> Date?
    ) {
        self.name = name
        self.server = server
        self.clock = clock
        self.maximumPause = max(maximumPause, Self.minimumPause)
        self.nextDeadline = nextDeadline
        self.update = update
    }

    /// Wakes at each deadline until the service group's graceful shutdown, or the task's
    /// cancellation, ends it.
    public func run() async throws {
        do {
            try await cancelWhenGracefulShutdown { try await self.wakeAtDeadlines() }
        } catch is CancellationError {}
    }

    private func wakeAtDeadlines() async throws {
        while !Task.isCancelled {
            let now = clock.nowSinceEpoch
            let next: Duration?
            do {
                next = try await deadline(after: now)
            } catch {
                if Task.isCancelled { return }
                server.logger.warning("timed update failed", metadata: ["update": "\(name)", "error": "\(error)"])
                next = nil
            }
            let latest = now + maximumPause
            try await clock.sleep(untilSinceEpoch: max(min(next ?? latest, latest), now + Self.minimumPause))
        }
    }

    /// Reads the next deadline, makes the update if it is due at `now`, and returns the next
    /// deadline then.
    private func deadline(after now: Duration) async throws -> Duration? {
        let (nextDeadline, update) = (nextDeadline, update)
        guard let next = try await server.read({ try nextDeadline($0) }).map(WallClock.sinceEpoch) else { return nil }
        guard next <= now else { return next }
        let date = WallClock.date(sinceEpoch: now)
        return try await server.update { try update($0, date) }.map(WallClock.sinceEpoch)
    }
}
