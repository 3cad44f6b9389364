/// What a user asks of their ride: the body of `POST /me/ride`.
///
/// On the wire: `{"action": "request", "destination": {…}}`, `{"action": "accept"}`,
/// `{"action": "rate", "stars": 4}`, and so on.
/// The server decides whether the action fits the user's current ``RideStatus``; one that does
/// not is refused with HTTP 409.
public enum RideAction: Sendable, Hashable {
    /// A passenger with no ride asks for one.
    case request(destination: Place)
    /// The passenger gives up on a ride that has not started (pending or approaching).
    case cancel
    /// The driver takes the ride being offered (incoming).
    case accept
    /// The driver has reached the passenger (approaching → riding).
    case arrive
    /// The driver drops the passenger off (riding → survey for the passenger).
    case finish
    /// The passenger is done with the survey without rating the ride (survey → none).
    case finishSurvey
    /// The passenger answers the survey: the ride was worth `stars`, 1 to 5 (survey → none; the
    /// rating is kept with the ride in the passenger's history).
    case rate(stars: Int)

    /// The name of an action, as sent in the `action` field.
    public enum Name: String, Codable, Sendable, CaseIterable {
        /// One name per case of ``RideAction``, named alike.
        case request, cancel, accept, arrive, finish, finishSurvey, rate
    }

    /// The ratings a survey takes.
    public static let stars = 1...5

    /// The action without its destination.
    public var name: Name {
        switch self {
        case .request: .request
        case .cancel: .cancel
        case .accept: .accept
        case .arrive: .arrive
        case .finish: .finish
        case .finishSurvey: .finishSurvey
        case .rate: .rate
        }
    }
}

extension RideAction: Codable {
    private enum CodingKeys: String, CodingKey {
        case action, destination, stars
    }

    /// Decodes `{"action": …}`, with a `destination` for `request` and `stars` for `rate`.
    public init(from decoder: any Decoder) throws {
        let container = try decoder.container(keyedBy: CodingKeys.self)
        switch try container.decode(Name.self, forKey: .action) {
        case .request: self = .request(destination: try container.decode(Place.self, forKey: .destination))
        case .cancel: self = .cancel
        case .accept: self = .accept
        case .arrive: self = .arrive
        case .finish: self = .finish
        case .finishSurvey: self = .finishSurvey
        case .rate: self = .rate(stars: try container.decode(Int.self, forKey: .stars))
        }
    }

    /// Encodes `{"action": …}`, the destination of a request and the stars of a rating.
    public func encode(to encoder: any Encoder) throws {
        var container = encoder.container(keyedBy: CodingKeys.self)
        try container.encode(name, forKey: .action)
        switch self {
        case .request(let destination): try container.encode(destination, forKey: .destination)
        case .rate(let stars): try container.encode(stars, forKey: .stars)
        case .cancel, .accept, .arrive, .finish, .finishSurvey: break
        }
    }
}
