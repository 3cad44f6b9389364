import NightrideModel

/// One operation of the ride rules, at one time, on a world: a driver-mode switch, a ride
/// action, or the inactivity switch-offs due.
///
/// The dispatch book is read once when the operation starts and written once when it
/// ``finish()``es, if it changed; the users' values go through the world, which makes one
/// version of each changed value when the operation is committed. An operation that throws is
/// dropped whole: nothing it did is kept, since the world it holds is its own copy (in memory) or
/// its own transaction (on a store).
///
/// Driver mode switches itself off once a driver has gone `inactivityTimeout` without a driver
/// action (switching on, accepting, arriving, finishing) while waiting for or being offered a
/// ride.
struct RideOperation<World: RideWorld> {
    /// The world the operation reads and writes (its own copy, or its own transaction).
    var world: World
    /// The dispatch book as the operation changes it.
    var book: DispatchBook
    private let original: DispatchBook
    /// When the operation happens.
    let now: Duration
    let rules: RideRules

    /// Starts an operation on `world` at `now`.
    init(on world: World, at now: Duration, rules: RideRules) throws {
        self.world = world
        book = try world.dispatchBook()
        original = book
        self.now = now
        self.rules = rules
    }

    /// Ends the operation; returns the world with its writes, the dispatch book among them.
    mutating func finish() throws -> World {
        if book != original {
            try world.setDispatchBook(book)
        }
        return world
    }

    // MARK: Driver mode

    /// Switches `user`'s driver mode. Switching on counts as driver activity even when already on
    /// (it keeps the mode alive) and may bring an offer. Switching off withdraws an offer being
    /// made; it is refused while the user drives someone. Switching on is refused while the user
    /// rides as a passenger (a ride asked for, coming or under way): dispatch would offer them
    /// rides to drive from the back seat.
    mutating func setDriverMode(_ on: Bool, for user: String) throws {
        guard let current = try world.driverMode(of: user) else { throw RideRefusal(.unknownUser, "no user \(user)") }
        if on, !current, let ride = try world.rideStatus(of: user), ride.isUnderway(asPassenger: user) {
            throw RideRefusal(.passengerRiding, "driver mode can't be switched on while you ride as a passenger")
        }
        if on {
            book.drivers[user] = now
            if !current {
                try world.setDriverMode(true, for: user)
            }
            try dispatch()
        } else if current {
            guard !book.busyDrivers.contains(user) else {
                throw RideRefusal(.driverBusy, "driver mode can't be switched off during a ride you drive")
            }
            try switchDriverModeOff(for: user)
            try dispatch()
        }
    }

    /// Switches off every driver idle for the inactivity timeout by now (in name order, so the
    /// result is repeatable), withdrawing the offers they were ignoring, and offers those rides
    /// again.
    mutating func expireInactiveDrivers() throws {
        guard let timeout = rules.inactivityTimeout else { return }
        let due = book.idleDrivers.filter { now - $0.value >= timeout }.keys.sorted()
        guard !due.isEmpty else { return }
        for driver in due {
            try switchDriverModeOff(for: driver)
        }
        try dispatch()
    }

    /// Turns driver mode off, giving back a ride being offered to the user.
    private mutating func switchDriverModeOff(for user: String) throws {
        if let offered = book.offeredRides[user] {
            try withdrawOffer(offered)
        }
        book.drivers[user] = nil
        try world.setDriverMode(false, for: user)
    }

    // MARK: Accounts

    /// Restarts the idle time of a user in driver mode.
    mutating func markActive(_ user: String) {
        if book.drivers[user] != nil {
            book.drivers[user] = now
        }
    }
}
