/// The answer to `POST /login`: `{"token": "…", "user": "ann"}`.
///
/// Every other route wants the token as `Authorization: Bearer <token>`.
public struct LoginResponse: Codable, Sendable, Hashable {
    /// The bearer token of this session.
    public var token: String
    /// The name of the logged-in user, as the server stored it (trimmed).
    public var user: String

    /// A response from its parts.
    public init(token: String, user: String) {
        self.token = token
        self.user = user
    }
}
