import NightrideModel

/// The two per-user values the server owns and versions separately.
public enum Resource: String, Sendable, Hashable, CaseIterable, CustomStringConvertible {
    /// Whether the user is available as a driver (`/me/driver-mode`).
    case driverMode = "driver-mode"
    /// The user's ride status (`/me/ride`).
    case ride

    /// The path segment, as in the routes.
    public var description: String { rawValue }
}

/// A value of one of the two resources, as the change log records it.
public enum ResourceValue: Sendable, Hashable {
    /// A driver-mode value.
    case driverMode(Bool)
    /// A ride-status value.
    case ride(RideStatus)

    /// Which resource the value belongs to.
    public var resource: Resource {
        switch self {
        case .driverMode: .driverMode
        case .ride: .ride
        }
    }
}
