import NightrideModel

/// The screen a client shows, derived from the user's driver mode and ride status only: the
/// client keeps no screen state of its own, so the server decides what is shown.
///
/// | driver mode | ride status | screen |
/// |---|---|---|
/// | any | unknown | connecting |
/// | off | none | passenger requesting a ride |
/// | on | none | driver waiting for a ride |
/// | any | pending | passenger waiting for a driver |
/// | any | incoming | driver accepting a ride |
/// | any | approaching (as passenger) | passenger: driver on the way |
/// | any | approaching (as driver) | driver: going to the passenger |
/// | any | riding | riding |
/// | any | survey | survey |
public enum Screen: String, Codable, Sendable, CaseIterable {
    case connecting
    case passengerRequesting
    case passengerWaiting
    case passengerDriverComing
    case driverWaiting
    case driverAccepting
    case driverGoingToPassenger
    case riding
    case survey

    /// The screen for `driverMode` and `ride`, seen by `user`.
    public init(driverMode: Bool?, ride: RideStatus?, user: String) {
        guard let ride, let driverMode else {
            self = .connecting
            return
        }
        switch ride {
        case .none: self = driverMode ? .driverWaiting : .passengerRequesting
        case .pending: self = .passengerWaiting
        case .incoming: self = .driverAccepting
        case .approaching(let ride): self = ride.driver == user ? .driverGoingToPassenger : .passengerDriverComing
        case .riding: self = .riding
        case .survey: self = .survey
        }
    }

    /// A short title for transcripts and the terminal UI.
    public var title: String {
        switch self {
        case .connecting: "Connecting…"
        case .passengerRequesting: "Where to?"
        case .passengerWaiting: "Looking for a driver"
        case .passengerDriverComing: "Your driver is on the way"
        case .driverWaiting: "Waiting for a ride"
        case .driverAccepting: "New ride request"
        case .driverGoingToPassenger: "Pick up your passenger"
        case .riding: "Riding"
        case .survey: "How was your ride?"
        }
    }
}
