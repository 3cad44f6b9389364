/// What a screen's ``ViewModel`` does: its initial state, the reducers each action produces,
/// and which actions show a spinner.
///
/// ```swift
/// struct Login: ViewModelDefinition {
///     let service: LoginService
///     var initialState: LoginState { LoginState() }
///     func showSpinner(_ action: LoginAction) -> Bool { action == .login }
///     func reducers(for action: LoginAction) -> Reducers<LoginState> {
///         switch action {
///         case .setUsername(let name): .reduce { $0.username = name }
///         case .setPassword(let password): .reduce { $0.password = password }
///         case .login: .run { state, emit in
///             let token = try await service.login(state.username, state.password)
///             await emit { $0.token = token }
///         }
///         }
///     }
/// }
/// ```
public protocol ViewModelDefinition: Sendable {
    /// What the view sends: taps, text changes.
    associatedtype Action: Sendable
    /// What the view renders. Keep it a value type.
    associatedtype State: Sendable

    /// The state before any action.
    var initialState: State { get }

    /// Whether `action` counts for ``ViewModel/isLoading`` while it runs. Only actions that
    /// ``Reducers/run(_:)`` can show a spinner: immediate reducers finish before a view could
    /// draw one. Defaults to `false`.
    func showSpinner(_ action: Action) -> Bool

    /// What happens when `action` is sent while an earlier action is still running. Defaults
    /// to ``ActionPolicy/concurrent``.
    func policy(for action: Action) -> ActionPolicy

    /// The reducers `action` produces: none, some at once, or a task that emits them over time
    /// and may fail.
    func reducers(for action: Action) -> Reducers<State>
}

extension ViewModelDefinition {
    /// No action shows a spinner.
    public func showSpinner(_ action: Action) -> Bool {
        false
    }

    /// Every action runs to its end, whatever else is sent.
    public func policy(for action: Action) -> ActionPolicy {
        .concurrent
    }
}

/// What happens to a running action when another action is sent.
public enum ActionPolicy: Sendable, Hashable {
    /// Both run, each to its end (the default).
    case concurrent
    /// Sending an action with the same key cancels the running one: it stops, applies no more
    /// reducers, and reports neither completion nor failure. Use it for searches and refreshes,
    /// where only the latest answer matters.
    case switchToLatest(key: String)
}
