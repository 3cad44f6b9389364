import Foundation

/// The wall clock as an injected clock moves it: the date it starts at, plus the time its clock
/// has run since. ``Sessions`` and ``TimedUpdate`` keep their times on it.
///
/// Stored times (a session's expiry, a deadline in the app's data) are dates, so that they mean
/// the same to the next process on the same data; reading and sleeping go through `clock`, so
/// that a test moves them with a test clock, and a server never waits on a wall clock that an
/// adjustment moves back. Share one between the kit's parts and the app's own code, so that all
/// of them agree on what time it is:
///
/// ```swift
/// let time = WallClock(testClock, startingAt: Date(timeIntervalSince1970: 1_000_000))
/// await testClock.advance(by: .seconds(60))
/// time.now  // 1970-01-12 13:47:40 +0000
/// ```
///
/// Times are to the microsecond, the same each way: `now` and the deadlines compared with it
/// never disagree by a rounding.
public struct WallClock: Sendable {
    /// The starting date in microseconds since 1970.
    private let start: Duration
    /// The clock's time since the start.
    private let elapsed: @Sendable () -> Duration
    /// Sleeps until the clock's time since the start reaches its argument.
    private let sleepUntilElapsed: @Sendable (Duration) async throws -> Void

    /// A wall clock that reads `startingAt` now and moves on with `clock`.
    public init<C: Clock>(_ clock: C = ContinuousClock(), startingAt start: Date = Date()) where C.Duration == Duration {
        let origin = clock.now
        self.start = Self.sinceEpoch(start)
        elapsed = { origin.duration(to: clock.now) }
        sleepUntilElapsed = { try await clock.sleep(until: origin.advanced(by: $0), tolerance: nil) }
    }

    /// The date now.
    public var now: Date {
        Self.date(sinceEpoch: nowSinceEpoch)
    }

    /// Suspends until ``now`` reaches `date` (at once for a date that has passed); throws
    /// `CancellationError` when the task is cancelled first.
    public func sleep(until date: Date) async throws {
        try await sleep(untilSinceEpoch: Self.sinceEpoch(date))
    }

    /// ``now`` as the time since 1970, to the microsecond.
    var nowSinceEpoch: Duration {
        start + .microseconds(Int64((elapsed() / .microseconds(1)).rounded()))
    }

    /// ``sleep(until:)`` for a time since 1970.
    func sleep(untilSinceEpoch time: Duration) async throws {
        try await sleepUntilElapsed(time - start)
    }

    /// `date` as the time since 1970, to the microsecond.
    static func sinceEpoch(_ date: Date) -> Duration {
        .microseconds(Int64((date.timeIntervalSince1970 * 1_000_000).rounded()))
    }

    /// A time since 1970 as a date, to the microsecond: the inverse of ``sinceEpoch(_:)``.
    static func date(sinceEpoch time: Duration) -> Date {
        Date(timeIntervalSince1970: seconds(time))
    }

    /// A time since 1970 in seconds, rounded to the microsecond: what ``Sessions`` stores.
    static func seconds(_ time: Duration) -> Double {
        (time / .microseconds(1)).rounded() / 1_000_000
    }
}
