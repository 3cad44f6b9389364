import NightrideClient
import StateLoopSync

/// One screen a client showed: when (server time), what, and from which server versions.
public struct ScreenShown: Sendable, Equatable {
    /// When it was shown, on the server's clock (the demo runs both in one process).
    public var time: Duration
    /// The client's user.
    public var user: String
    /// The screen.
    public var screen: Screen
    /// The confirmed driver-mode version behind it.
    public var driverModeVersion: Version?
    /// The confirmed ride version behind it.
    public var rideVersion: Version?
    /// Whether an unconfirmed mutation shaped it (an optimistic screen).
    public var isOptimistic: Bool

    /// What the client shows in `state` at `time`.
    public init(time: Duration, state: ClientState) {
        self.time = time
        user = state.user
        screen = state.screen
        driverModeVersion = state.driverMode.confirmedVersion
        rideVersion = state.ride.confirmedVersion
        isOptimistic = state.isOptimistic
    }

    /// Whether `other` shows the same thing (the time aside).
    func showsSameAs(_ other: ScreenShown) -> Bool {
        screen == other.screen && driverModeVersion == other.driverModeVersion
            && rideVersion == other.rideVersion && isOptimistic == other.isOptimistic
    }
}
