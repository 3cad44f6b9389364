/// What a user asks of their ride: the body of `POST /me/ride`.
///
/// On the wire: `{"action": "request", "destination": {…}}`, `{"action": "accept"}`, and so on.
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
    /// The passenger is done with the survey (survey → none).
    case finishSurvey

    /// The name of an action, as sent in the `action` field.
    public enum Name: String, Codable, Sendable, CaseIterable {
        /// One name per case of ``RideAction``, named alike.
        case request, cancel, accept, arrive, finish, finishSurvey
    }

    /// The action without its destination.
    public var name: Name {
        switch self {
        case .request: .request
        case .cancel: .cancel
        case .accept: .accept
        case .arrive: .arrive
        case .finish: .finish
        case .finishSurvey: .finishSurvey
        }
    }
}

extension RideAction: Codable {
    private enum CodingKeys: String, CodingKey {
        case action, destination
    }

    /// Decodes `{"action": …}`, with a `destination` for `request`.
    public init(from decoder: any Decoder) throws {
        let container = try decoder.container(keyedBy: CodingKeys.self)
        switch try container.decode(Name.self, forKey: .action) {
        case .request: self = .request(destination: try container.decode(Place.self, forKey: .destination))
        case .cancel: self = .cancel
        case .accept: self = .accept
        case .arrive: self = .arrive
        case .finish: self = .finish
        case .finishSurvey: self = .finishSurvey
        }
    }

    /// Encodes `{"action": …}` and the destination of a request.
    public func encode(to encoder: any Encoder) throws {
        var container = encoder.container(keyedBy: CodingKeys.self)
        try container.encode(name, forKey: .action)
        if case .request(let destination) = self {
            try container.encode(destination, forKey: .destination)
        }
    }
}
