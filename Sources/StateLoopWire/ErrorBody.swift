/// The body of an error response: `{"error": "invalidTransition", "message": "…"}`.
///
/// `error` is a stable code a client can switch on; `message` is for people. The HTTP status
/// tells how to react: 4xx is a refusal that retrying will not change, 5xx is worth retrying.
public struct ErrorBody: Error, Codable, Sendable, Hashable {
    /// A stable, machine-readable code, such as `invalidTransition` or `unauthorized`.
    public var error: String
    /// A human-readable explanation.
    public var message: String

    /// An error body from its parts.
    public init(error: String, message: String) {
        self.error = error
        self.message = message
    }
}
