import NightrideModel

/// A ride from its request until the passenger's survey is done.
struct ActiveRide: Codable, Sendable, Hashable {
    enum Stage: Codable, Sendable, Hashable {
        /// In the queue; no driver is being asked.
        case waiting
        /// Offered to a driver, who hasn't accepted yet.
        case offered(to: String)
        case approaching
        case riding
        /// Dropped off; the driver is free, the passenger is rating the ride.
        case survey
    }

    /// Orders the waiting queue by request, also when an offer is given back.
    let number: Int
    var ride: Ride
    var stage: Stage
}
