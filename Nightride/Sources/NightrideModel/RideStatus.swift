/// What one user's "ride box" holds, from that user's point of view: the value of
/// `GET /me/ride`, versioned by the server.
///
/// A passenger goes `pending` → `approaching` → `riding` → `survey` → `none`; a driver goes
/// `incoming` (offered a ride) → `approaching` → `riding` → `none`.
///
/// On the wire the phase is a string beside the ride, so a client can switch on one field:
/// `{"phase": "none"}`, `{"phase": "approaching", "ride": {…}}`.
public enum RideStatus: Sendable, Hashable {
    /// No ride.
    case none
    /// The passenger asked for a ride; no driver has accepted it yet.
    case pending(Ride)
    /// The driver is being offered this ride and may accept it.
    case incoming(Ride)
    /// The driver accepted and is on the way to the passenger.
    case approaching(Ride)
    /// The passenger is in the car.
    case riding(Ride)
    /// The ride is over; the passenger is asked to rate it.
    case survey(Ride)

    /// The name of a status without its ride, as sent in the `phase` field.
    public enum Phase: String, Codable, Sendable, CaseIterable {
        /// One phase per case of ``RideStatus``, named alike.
        case none, pending, incoming, approaching, riding, survey
    }

    /// The status without its ride.
    public var phase: Phase {
        switch self {
        case .none: .none
        case .pending: .pending
        case .incoming: .incoming
        case .approaching: .approaching
        case .riding: .riding
        case .survey: .survey
        }
    }

    /// Whether `user` rides in it as the passenger: asked for, its driver coming, or under way
    /// (not once it is over and only the survey is left). Driver mode stays off meanwhile.
    public func isUnderway(asPassenger user: String) -> Bool {
        switch self {
        case .pending(let ride), .approaching(let ride), .riding(let ride): ride.passenger == user
        case .none, .incoming, .survey: false
        }
    }

    /// The ride, for every status but `none`.
    public var ride: Ride? {
        switch self {
        case .none: nil
        case .pending(let ride), .incoming(let ride), .approaching(let ride), .riding(let ride), .survey(let ride): ride
        }
    }

    /// The status of `phase` carrying `ride`; `nil` when a ride is missing or one is given to `none`.
    public init?(phase: Phase, ride: Ride?) {
        switch (phase, ride) {
        case (.none, nil): self = .none
        case (.pending, let ride?): self = .pending(ride)
        case (.incoming, let ride?): self = .incoming(ride)
        case (.approaching, let ride?): self = .approaching(ride)
        case (.riding, let ride?): self = .riding(ride)
        case (.survey, let ride?): self = .survey(ride)
        default: return nil
        }
    }
}

extension RideStatus: Codable {
    private enum CodingKeys: String, CodingKey {
        case phase, ride
    }

    /// Decodes `{"phase": …, "ride": …}`, refusing a phase without its ride.
    public init(from decoder: any Decoder) throws {
        let container = try decoder.container(keyedBy: CodingKeys.self)
        let phase = try container.decode(Phase.self, forKey: .phase)
        let ride = try container.decodeIfPresent(Ride.self, forKey: .ride)
        guard let status = RideStatus(phase: phase, ride: ride) else {
            throw DecodingError.dataCorruptedError(
                forKey: .ride, in: container,
                debugDescription: phase == .none ? "no ride expected with phase none" : "phase \(phase.rawValue) needs a ride"
            )
        }
        self = status
    }

    /// Encodes `{"phase": …}` and the ride when there is one.
    public func encode(to encoder: any Encoder) throws {
        var container = encoder.container(keyedBy: CodingKeys.self)
        try container.encode(phase, forKey: .phase)
        try container.encodeIfPresent(ride, forKey: .ride)
    }
}
