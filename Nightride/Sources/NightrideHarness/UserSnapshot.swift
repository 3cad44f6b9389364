import NightrideModel
import StateLoopWire

/// Both resources of one user at one moment: what a client should be showing once it has caught
/// up with the server.
public struct UserSnapshot: Sendable, Hashable {
    /// The driver-mode flag and its version.
    public var driverMode: Versioned<Bool>
    /// The ride status and its version.
    public var ride: Versioned<RideStatus>

    /// A snapshot from its parts.
    public init(driverMode: Versioned<Bool>, ride: Versioned<RideStatus>) {
        self.driverMode = driverMode
        self.ride = ride
    }
}
