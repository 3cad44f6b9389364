/// What dispatch decides from: the rides under way, the queue of rides waiting for a driver, and
/// the users in driver mode with the start of their idle time.
///
/// One value, read once and written once per operation: a driver's availability is derived from
/// it (a driver with a ride approaching or riding is busy; one being offered a ride is not free),
/// so that choosing a driver or expiring idle ones reads no other user's values.
struct DispatchBook: Codable, Sendable, Hashable {
    /// Every ride from its request until the passenger's survey is done, by id.
    var rides: [String: ActiveRide] = [:]
    /// Rides waiting for a driver, oldest request first.
    var waiting: [String] = []
    /// The number of the next ride requested (its id is `r<number>`).
    var nextRideNumber = 1
    /// The users in driver mode, each with their last driver action (switching on, accepting,
    /// arriving, finishing) or the moment the server freed them: the start of their idle time.
    var drivers: [String: Duration] = [:]

    /// The drivers a ride of theirs keeps busy (approaching or riding).
    var busyDrivers: Set<String> {
        Set(
            rides.values.compactMap { active in
                switch active.stage {
                case .approaching, .riding: active.ride.driver
                case .waiting, .offered, .survey: nil
                }
            })
    }

    /// Each driver being offered a ride, with the ride's id.
    var offeredRides: [String: String] {
        Dictionary(
            uniqueKeysWithValues: rides.compactMap { id, active in
                if case .offered(let driver) = active.stage { (driver, id) } else { nil }
            })
    }

    /// The users in driver mode whose ride status is no ride, or an offer: the ones inactivity
    /// switches off, with the start of their idle time. A driver who is a passenger meanwhile,
    /// or drives someone, is not idle.
    var idleDrivers: [String: Duration] {
        let passengers = Set(rides.values.map(\.ride.passenger))
        let busy = busyDrivers
        return drivers.filter { !passengers.contains($0.key) && !busy.contains($0.key) }
    }

    /// The idle drivers not being offered a ride: the ones dispatch may choose.
    var availableDrivers: [String: Duration] {
        let offered = offeredRides
        return idleDrivers.filter { offered[$0.key] == nil }
    }

    /// When the next inactivity switch-off falls due with `timeout`, if any driver is idle.
    func nextInactivityDeadline(timeout: Duration?) -> Duration? {
        guard let timeout else { return nil }
        return idleDrivers.values.min().map { $0 + timeout }
    }
}
