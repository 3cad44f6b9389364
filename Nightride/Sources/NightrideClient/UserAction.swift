import NightrideModel

/// What the user can do, whatever the front end (terminal keys, a script, a test).
public enum UserAction: Sendable, Equatable {
    /// Switch driver mode on or off (optimistic).
    case toggleDriverMode
    /// Ask for a ride to `destination` (optimistic).
    case requestRide(to: Place)
    /// Cancel the ride asked for or approaching (optimistic).
    case cancelRide
    /// Accept the ride offered (driver).
    case acceptRide
    /// Reached the passenger (driver).
    case arrive
    /// Dropped the passenger (driver).
    case finishRide
    /// Done with the survey, without a rating (passenger).
    case finishSurvey
    /// Answered the survey: the ride was worth `stars`, 1 to 5 (passenger).
    case rateRide(stars: Int)
    /// Typed in the destination box.
    case typeDestination(String)
    /// Opened the history: its first page is loaded again, with the rides ended since.
    case openHistory
    /// Scrolled to the end of the history.
    case scrollHistory
    /// Dismissed the error on the status line.
    case dismissError
    /// Asked for fresh data now (the manual refresh key).
    case refresh
}
