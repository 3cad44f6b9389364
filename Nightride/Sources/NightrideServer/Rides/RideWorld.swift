import NightrideModel

/// What one operation of the ride rules reads and changes: every user's two served values, the
/// accounts, the dispatch book and the histories, as one consistent view.
///
/// An operation's writes are the operation's until it ends: reads see them, and the world turns
/// each changed value into one new version when the operation is over, however often the rules
/// set it meanwhile (a driver freed and offered another ride in one step is one change). That
/// is what a store transaction does (``StoreWorld``), so the same rules also run in memory, in
/// the tests (their `MemoryWorld`).
protocol RideWorld {
    /// The driver mode of `user`; `nil` for no such user.
    func driverMode(of user: String) throws -> Bool?
    /// The ride status of `user`; `nil` for no such user.
    func rideStatus(of user: String) throws -> RideStatus?
    /// Sets the driver mode of an existing user.
    mutating func setDriverMode(_ on: Bool, for user: String) throws
    /// Sets the ride status of an existing user.
    mutating func setRideStatus(_ status: RideStatus, for user: String) throws

    /// The account whose case-folded name is `key`.
    func account(_ key: String) throws -> Account?
    /// Creates the account `key` with its user: driver mode off, no ride, `history` as past rides.
    mutating func createAccount(_ account: Account, key: String, history: [Ride]) throws

    /// The rides under way and the drivers available: an empty book before the first ride.
    func dispatchBook() throws -> DispatchBook
    /// Replaces the dispatch book.
    mutating func setDispatchBook(_ book: DispatchBook) throws

    /// Adds `ride` as the newest of `user`'s past rides.
    mutating func appendHistory(_ ride: Ride, for user: String) throws
    /// Keeps `stars` as the rating of `user`'s newest past ride, when it is the ride `id` (the
    /// one whose survey is answered: no ride of the passenger's ends after it before that).
    mutating func rateNewestRide(_ id: String, stars: Int, for user: String) throws
}
