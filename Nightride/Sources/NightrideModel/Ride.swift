/// One ride: who asked for it, who drives it (once a driver is involved), and where it goes.
///
/// Users are identified by their name throughout Nightride: logging in with a name is all the
/// identity the demo needs.
///
/// `{"id": "r3", "passenger": "ann", "driver": "bob", "destination": {…}}`
public struct Ride: Codable, Sendable, Hashable, Identifiable {
    /// The server's identifier of the ride.
    public var id: String
    /// The user who requested the ride.
    public var passenger: String
    /// The driver the ride is offered to or accepted by; `nil` while no driver has it.
    public var driver: String?
    /// Where the passenger wants to go.
    public var destination: Place

    /// A ride from its parts.
    public init(id: String, passenger: String, driver: String? = nil, destination: Place) {
        self.id = id
        self.passenger = passenger
        self.driver = driver
        self.destination = destination
    }
}
