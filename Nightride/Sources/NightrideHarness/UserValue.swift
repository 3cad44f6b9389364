import NightrideModel

/// Which of a user's two values the server owns and versions separately (each served as a
/// resource of the kit).
public enum UserValue: String, Sendable, Hashable, CaseIterable, CustomStringConvertible {
    /// Whether the user is available as a driver (`/me/driver-mode`).
    case driverMode = "driver-mode"
    /// The user's ride status (`/me/ride`).
    case ride

    /// The path segment, as in the routes.
    public var description: String { rawValue }
}

/// What one of a user's two values holds, as the change log records it.
public enum UserValueContent: Sendable, Hashable {
    /// A driver-mode value.
    case driverMode(Bool)
    /// A ride-status value.
    case ride(RideStatus)

    /// Which of the user's values it is.
    public var resource: UserValue {
        switch self {
        case .driverMode: .driverMode
        case .ride: .ride
        }
    }
}
