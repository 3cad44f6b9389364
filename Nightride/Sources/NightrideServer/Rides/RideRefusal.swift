import HTTPTypes
import Hummingbird
import NightrideModel
import StateLoopServer
import StateLoopWire

/// Why the ride rules refused a request: thrown by a route, answered with its ``status`` and an
/// ``ErrorBody``.
public struct RideRefusal: HTTPResponseError, Sendable, Hashable, CustomStringConvertible {
    /// The kinds of refusal.
    public enum Code: String, Sendable, Hashable {
        /// The action does not fit the user's ride status (HTTP 409).
        case invalidTransition
        /// Driver mode cannot be switched off while driving someone (HTTP 409).
        case driverBusy
        /// Driver mode cannot be switched on while riding as a passenger: a ride asked for, its
        /// driver coming, or under way (HTTP 409).
        case passengerRiding
        /// No such user (HTTP 404; over HTTP a bad token is a 401 before this).
        case unknownUser
        /// The login name is empty or too long (HTTP 400).
        case invalidName
        /// The login password is empty or too long (HTTP 400).
        case invalidPassword
        /// The login's password is wrong or missing for a user who has one (HTTP 401).
        case wrongPassword
        /// A login of a name that has no account yet gave no password: accounts are created
        /// with one (HTTP 400).
        case passwordRequired
        /// A ride was requested to a place that is not in the catalog (HTTP 400).
        case unknownPlace
        /// The history cursor is not one the server handed out (HTTP 400).
        case invalidCursor
        /// A survey's rating is not 1 to 5 stars (HTTP 400).
        case invalidRating
        /// The `Mutation-ID` is empty, longer than 64 bytes, or has characters other than
        /// letters, digits, `-`, `_`, `.` and `:` (HTTP 400).
        case invalidMutationID
        /// The `Mutation-ID` was already used for another change (another body or route): the
        /// first answer is not the answer to this one (HTTP 409).
        case mutationIDReused
    }

    /// The kind of refusal.
    public var code: Code
    /// A human-readable explanation.
    public var message: String

    /// A refusal from its parts.
    public init(_ code: Code, _ message: String) {
        self.code = code
        self.message = message
    }

    /// The JSON body sent to the client.
    public var body: ErrorBody {
        ErrorBody(error: code.rawValue, message: message)
    }

    /// The HTTP status it is answered with.
    public var status: HTTPResponse.Status {
        switch code {
        case .invalidTransition, .driverBusy, .passengerRiding, .mutationIDReused: .conflict
        case .unknownUser: .notFound
        case .invalidName, .invalidPassword, .invalidCursor, .invalidRating, .invalidMutationID, .passwordRequired, .unknownPlace:
            .badRequest
        case .wrongPassword: .unauthorized
        }
    }

    /// The answer: ``status`` with ``body``.
    public func response(from request: Request, context: some RequestContext) -> Response {
        Response.error(status, code.rawValue, message)
    }

    /// The refusal as a mutation route's, which the kit remembers for retries.
    var mutationRefusal: MutationRefusal {
        MutationRefusal(code.rawValue, message, status: status.code)
    }

    /// `code: message`.
    public var description: String {
        "\(code.rawValue): \(message)"
    }
}
