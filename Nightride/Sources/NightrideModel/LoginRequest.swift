/// The body of `POST /login`: `{"name": "ann", "password": "…"}`.
///
/// A name seen for the first time creates an account with the password given; every later
/// login of that name must give it (a wrong or missing one is a 401). A new name without a
/// password is refused (400 `passwordRequired`): there are no accounts without one. Names are
/// one account whatever their case: "Ann" signs in to "ann".
public struct LoginRequest: Codable, Sendable, Hashable {
    /// The user's name, which is also their identity.
    public var name: String
    /// The user's password, 1 to ``maximumPasswordBytes`` bytes of UTF-8 without NUL. Optional
    /// on the wire so that a request without one gets a clear refusal, not a decoding error.
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
