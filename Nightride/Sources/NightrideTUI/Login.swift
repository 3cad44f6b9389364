import Foundation
import NightrideClient
import StateLoopSync
import StateLoopViewModel

/// What the login form asks of its view model.
public enum LoginAction: Equatable, Sendable {
    case setUsername(String)
    case setPassword(String)
    case login
}

/// The login screen's state: what is typed, and how the last attempt ended.
public struct LoginState: Equatable, Sendable {
    /// How a sign-in attempt ended.
    public enum Outcome: Equatable, Sendable {
        /// The server opened a session: its token.
        case signedIn(token: String)
        /// The server refused the password (HTTP 401).
        case refused
    }

    public var username = ""
    public var password = ""
    /// The last attempt's outcome; `nil` before the first, and while one fails for another reason
    /// (shown by the view model's errors output).
    public var outcome: Outcome?

    public init() {}

    /// The session's token once signed in.
    public var token: String? {
        if case .signedIn(let token) = outcome { token } else { nil }
    }

    /// Whether the server refused the last password. Set to `true` to show the refusal.
    public var refused: Bool {
        get { outcome == .refused }
        set { outcome = newValue ? .refused : nil }
    }

    /// Nightride's account rules, checked before anything is sent: a name of five characters or
    /// more, a password of three or more.
    public var isFormValid: Bool {
        username.count >= 5 && password.count >= 3
    }

    /// What a refused password is called, on the login screen and by `nightride client --user`
    /// alike: a name the server has not seen makes an account, so only the password can be wrong.
    public static let wrongPassword = "Wrong password for this username"

    /// The line under the form after an attempt.
    public var message: String? {
        switch outcome {
        case .signedIn: "Signed in"
        case .refused: LoginState.wrongPassword
        case nil: nil
        }
    }
}

/// How the screen signs in: a token for the right password (or for a name seen for the first
/// time, which the password then guards), `nil` for a wrong password; anything else throws, with
/// a message for the user.
public struct LoginService: Sendable {
    /// One attempt.
    public var login: @Sendable (_ username: String, _ password: String) async throws -> String?

    /// A service that signs in with `login`.
    public init(login: @escaping @Sendable (_ username: String, _ password: String) async throws -> String?) {
        self.login = login
    }

    /// Nightride's `POST /login` on `server`: a refusal (HTTP 401) is a wrong password; another
    /// status, or no answer, is a ``LoginProblem`` that says which.
    public static func nightride(server: URL) -> LoginService {
        LoginService { username, password in
            do {
                return try await NightrideAPI.login(server: server, name: username, password: password).token
            } catch let error as HTTPStatusError where error.status == 401 {
                return nil
            } catch let error as HTTPStatusError {
                throw LoginProblem(description: "the server refused the login (HTTP \(error.status))")
            } catch {
                throw LoginProblem(description: "cannot reach \(server.absoluteString): \(NightrideAPI.message(for: error))")
            }
        }
    }
}

/// A login that failed for another reason than a wrong password.
public struct LoginProblem: Error, Equatable, CustomStringConvertible {
    /// What went wrong, for the user.
    public let description: String
}

/// The login screen's view model: the spinner while an attempt runs, an attempt only for a
/// valid form, its outcome in the state and its other failures on the errors output.
public struct Login: ViewModelDefinition {
    let service: LoginService

    /// A view model that signs in through `service`.
    public init(service: LoginService) {
        self.service = service
    }

    public var initialState: LoginState { LoginState() }

    public func showSpinner(_ action: LoginAction) -> Bool {
        action == .login
    }

    public func reducers(for action: LoginAction) -> Reducers<LoginState> {
        switch action {
        case .setUsername(let username):
            .reduce { $0.username = username }
        case .setPassword(let password):
            .reduce { $0.password = password }
        case .login:
            .run { state, emit in
                guard state.isFormValid else { return }
                let token = try await service.login(state.username, state.password)
                await emit { $0.outcome = token.map { .signedIn(token: $0) } ?? .refused }
            }
        }
    }
}
