import Foundation

/// One ride: who asked for it, who drives it (once a driver is involved), and where it goes.
///
/// Users are identified by their name throughout Nightride: logging in with a name is all the
/// identity the demo needs.
///
/// `{"id": "r3", "passenger": "ann", "driver": "bob", "destination": {…}}`, and in a history
/// page `"endedAt": "2026-11-30T04:05:00Z"` too.
public struct Ride: Codable, Sendable, Hashable, Identifiable {
    /// The server's identifier of the ride.
    public var id: String
    /// The user who requested the ride.
    public var passenger: String
    /// The driver the ride is offered to or accepted by; `nil` while no driver has it.
    public var driver: String?
    /// Where the passenger wants to go.
    public var destination: Place
    /// When the ride ended (the driver dropped the passenger off), to the second: set on the
    /// rides of a history page, `nil` elsewhere and on rows written before rides were dated.
    /// On the wire, an ISO 8601 date in UTC.
    public var endedAt: Date?
    /// The passenger's rating of the ride, 1 to 5 stars, once given in the survey: in the
    /// passenger's history only.
    public var rating: Int?

    /// A ride from its parts.
    public init(id: String, passenger: String, driver: String? = nil, destination: Place, endedAt: Date? = nil, rating: Int? = nil) {
        self.id = id
        self.passenger = passenger
        self.driver = driver
        self.destination = destination
        self.endedAt = endedAt
        self.rating = rating
    }

    private enum CodingKeys: String, CodingKey {
        case id, passenger, driver, destination, endedAt, rating
    }

    public init(from decoder: any Decoder) throws {
        let container = try decoder.container(keyedBy: CodingKeys.self)
        id = try container.decode(String.self, forKey: .id)
        passenger = try container.decode(String.self, forKey: .passenger)
        driver = try container.decodeIfPresent(String.self, forKey: .driver)
        destination = try container.decode(Place.self, forKey: .destination)
        if let ended = try container.decodeIfPresent(String.self, forKey: .endedAt) {
            guard let date = try? Date(ended, strategy: .iso8601) else {
                throw DecodingError.dataCorruptedError(forKey: .endedAt, in: container, debugDescription: "not an ISO 8601 date: \(ended)")
            }
            endedAt = date
        }
        rating = try container.decodeIfPresent(Int.self, forKey: .rating)
    }

    public func encode(to encoder: any Encoder) throws {
        var container = encoder.container(keyedBy: CodingKeys.self)
        try container.encode(id, forKey: .id)
        try container.encode(passenger, forKey: .passenger)
        try container.encodeIfPresent(driver, forKey: .driver)
        try container.encode(destination, forKey: .destination)
        try container.encodeIfPresent(endedAt.map { $0.formatted(.iso8601) }, forKey: .endedAt)
        try container.encodeIfPresent(rating, forKey: .rating)
    }
}
