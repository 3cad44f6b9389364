import Foundation

/// Times on the wall clock as durations since 1970, to the microsecond (the change feed's
/// precision): what stored times (drivers' idle times, session expiries, the feed's) are made of,
/// so that they mean the same after a restart.
package enum WallTime {
    /// `date` as a time since 1970.
    package static func of(_ date: Date) -> Duration {
        .microseconds(Int64((date.timeIntervalSince1970 * 1_000_000).rounded()))
    }

    /// A time since 1970 as a date.
    package static func date(_ wallTime: Duration) -> Date {
        Date(timeIntervalSince1970: Double(wallTime / .microseconds(1)).rounded() / 1_000_000)
    }
}
