import StateLoopViewModel

/// The README's ViewModel example, compiled.
enum ReadmeViewModel {
    enum LoginAction: Sendable, Equatable {
        case setUsername(String)
        case setPassword(String)
        case login
    }

    struct LoginState: Sendable {
        var username = ""
        var password = ""
        var token: String?
    }

    struct LoginService: Sendable {
        var login: @Sendable (String, String) async throws -> String
    }

    @MainActor
    final class Spinner {
        var isHidden = true
    }

    @MainActor
    static func sample(service: LoginService, spinner: Spinner) async {
        // README.md:
        struct Login: ViewModelDefinition {
            let service: LoginService
            var initialState: LoginState { LoginState() }
            func showSpinner(_ action: LoginAction) -> Bool { action == .login }
            func reducers(for action: LoginAction) -> Reducers<LoginState> {
                switch action {
                case .setUsername(let name): .reduce { $0.username = name }
                case .setPassword(let password): .reduce { $0.password = password }
                case .login:
                    .run { state, emit in
                        let token = try await service.login(state.username, state.password)
                        await emit { $0.token = token }
                    }
                }
            }
        }

        let viewModel = ViewModel(Login(service: service))  // on the main actor
        viewModel.execute(.setUsername("admin"))
        for await loading in viewModel.loading { spinner.isHidden = !loading }
        // End of the example.
    }
}
