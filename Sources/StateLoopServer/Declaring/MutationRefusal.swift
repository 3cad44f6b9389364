import StateLoopWire

/// Thrown by a mutation handler to refuse the mutation: nothing it wrote is kept, the answer is
/// remembered for its id (a retry gets the same refusal), and the client rolls it back and
/// reports it.
///
/// ```swift
/// guard ride.status == .requested else {
///     throw MutationRefusal("invalidTransition", "the ride was already accepted")
/// }
/// ```
public struct MutationRefusal: Error, Sendable, Hashable {
    /// The HTTP status: a 4xx other than 401, 403, 408 and 429 (409 Conflict unless said
    /// otherwise).
    public let status: Int
    /// The answer's body: a stable code and a message for people.
    public let body: ErrorBody

    /// A refusal with the code `error`, a `message`, and `status` (409 by default).
    ///
    /// A refusal is remembered and answered to every retry, so its status must be one that
    /// clients take as final: a 4xx other than 401 and 403 (which sign the client out), 408 and
    /// 429 (which it retries). Any other status is answered as 409.
    public init(_ error: String, _ message: String, status: Int = 409) {
        let isFinal = (400...499).contains(status) && ![401, 403, 408, 429].contains(status)
        self.status = isFinal ? status : 409
        self.body = ErrorBody(error: error, message: message)
    }

    /// The answer to a key the principal may not see, the same as to one that does not exist.
    public static let notFound = MutationRefusal("notFound", "no such resource", status: 404)
}
