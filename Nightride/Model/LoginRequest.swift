/// The body of `POST /login`: `{"name": "ann", "password": "…"}`.
///
/// A name seen for the first time creates the user. The password is optional: the first login
/// that gives one sets it for good, and from then on every login of that name must give it
/// (a wrong or missing one is a 401). Names that never had a password log in by name alone, as
/// the demo's scripted clients do.
public struct LoginRequest: Codable, Sendable, Hashable {
    /// The user's name, which is also their identity.
    public var name: String
    /// The user's password, if any; at most ``maximumPasswordBytes`` bytes of UTF-8.
    public var password: String?

    /// The longest name the server takes, in characters (after trimming spaces).
    public static let maximumNameLength = 40

    /// The longest name the server takes, in bytes of UTF-8 (after trimming spaces and
    /// composing accents, NFC): a character may carry any number of combining marks, so a
    /// limit in characters alone bounds nothing.
    public static let maximumNameBytes = 160

    /// The longest password the server takes, in bytes of UTF-8 (what bcrypt reads).
    public static let maximumPasswordBytes = 72

    /// A login as `name`, with `password` if given.
    public init(name: String, password: String? = nil) {
        self.name = name
        self.password = password
    }
}
