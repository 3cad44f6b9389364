/// The body of `POST /login`: `{"name": "ann"}`. A name seen for the first time creates the user.
public struct LoginRequest: Codable, Sendable, Hashable {
    /// The user's name, which is also their identity.
    public var name: String

    /// A login as `name`.
    public init(name: String) {
        self.name = name
    }
}
