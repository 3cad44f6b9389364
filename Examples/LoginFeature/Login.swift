import StateLoop
import StateLoopViewModel

/// What the login screen's view sends.
public enum LoginAction: Equatable, Sendable {
    case setUsername(String)
    case setPassword(String)
    case login
}

/// What the login screen renders.
public struct LoginState: Equatable, Sendable {
    public var username = ""
    public var password = ""
    public var token: String?
    public var refused = false

    public init() {}

    /// The sign-in button is enabled only for a plausible username and password.
    public var isFormValid: Bool {
        username.count > 4 && password.count > 2
    }

    /// What the screen says after a login attempt.
    public var message: String? {
        if token != nil { return "Signed in" }
        if refused { return "Wrong username or password" }
        return nil
    }
}

/// The backend call, injected so that tests and the demo choose its timing.
public struct LoginService: Sendable {
    /// Answers a token, `nil` for wrong credentials, or throws for an unexpected failure.
    public var login: @Sendable (_ username: String, _ password: String) async throws -> String?

    public init(login: @escaping @Sendable (_ username: String, _ password: String) async throws -> String?) {
        self.login = login
    }

    /// The seed's rules: `admin`/`admin` signs in, `error`/`error` fails unexpectedly, anything
    /// else is refused. Each call takes `latency` on `clock`.
    public static func rules(clock: some Clock<Duration>, latency: Duration = .seconds(1)) -> LoginService {
        LoginService { username, password in
            try await clock.sleep(for: latency)
            switch (username, password) {
            case ("admin", "admin"): return "token-admin"
            case ("error", "error"): throw UnexpectedLoginError()
            default: return nil
            }
        }
    }
}

/// The server failed in a way the screen cannot explain to the user.
public struct UnexpectedLoginError: Error, Equatable, CustomStringConvertible {
    public init() {}
    public var description: String { "Something went wrong, please try again" }
}

/// The login screen's view model.
public struct Login: ViewModelDefinition {
    let service: LoginService

    public init(service: LoginService) {
        self.service = service
    }

    public var initialState: LoginState {
        LoginState()
    }

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
                await emit {
                    $0.token = token
                    $0.refused = token == nil
                }
            }
        }
    }
}
