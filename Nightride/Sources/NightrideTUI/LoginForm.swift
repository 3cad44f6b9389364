import NightrideModel

/// What the login screen keeps on top of `LoginState`: which field takes the keys, and the last
/// unexpected error (the view model reports errors as events, not as state).
public struct LoginForm: Sendable, Equatable {
    /// A text field of the form.
    public enum Field: Sendable, Equatable {
        case username, password
    }

    /// The field that takes the typed characters.
    public var focus: Field
    /// The last failure other than a wrong password (server unreachable, say), until the next
    /// attempt.
    public var error: String?

    /// The longest name the server takes, in characters.
    public static let maximumUsernameLength = LoginRequest.maximumNameLength

    /// The username field focused, no error.
    public init(focus: Field = .username, error: String? = nil) {
        self.focus = focus
        self.error = error
    }
}
