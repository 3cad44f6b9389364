import NightrideModel

/// What a key press on the login screen asks for, besides changing the ``LoginForm``.
public enum LoginCommand: Sendable, Equatable {
    /// Hand this action to the login view model.
    case execute(LoginAction)
    /// Leave without logging in.
    case quit
    /// Clear the terminal and draw everything again.
    case redraw
}

/// The login screen's key bindings, as a pure function so that each is testable without a
/// terminal.
///
/// Tab and the arrows move between the two fields; Enter in the username field moves on, in the
/// password field it signs in, which only works once the form is valid (the seed's rule: a
/// username of 5 characters or more, a password of 3 or more). While a sign-in runs, the fields
/// are locked: the token that comes back must belong to the name on screen.
public enum LoginKeyMap {
    /// The new form and the commands for `key`.
    public static func handle(_ key: Key, state: LoginState, form: LoginForm, isLoading: Bool) -> (form: LoginForm, commands: [LoginCommand]) {
        var form = form
        switch key {
        case .control("c"), .escape:
            return (form, [.quit])
        case .control("l"):
            return (form, [.redraw])
        default:
            break
        }
        guard !isLoading else { return (form, []) }
        switch key {
        case .tab, .backTab, .up, .down:
            form.focus = form.focus == .username ? .password : .username
            return (form, [])
        case .enter:
            switch enter(state: state, form: form) {
            case .nextField:
                form.focus = .password
                return (form, [])
            case .signIn:
                form.error = nil
                return (form, [.execute(.login)])
            case .nothing:
                return (form, [])
            }
        case .character(let character):
            return (form, edit(form.focus, of: state) { $0.append(character) })
        case .backspace:
            return (form, edit(form.focus, of: state) { if !$0.isEmpty { $0.removeLast() } })
        case .control("u"):
            return (form, edit(form.focus, of: state) { $0 = "" })
        default:
            return (form, [])
        }
    }

    /// What Enter does now: the key help says it, and the key does it.
    public enum EnterAction: Sendable, Equatable {
        /// Moves from the username to the empty password.
        case nextField
        /// Signs in: the form is valid.
        case signIn
        /// Nothing: the form is not valid yet (the rule under the fields says why).
        case nothing
    }

    /// What Enter does for `state` with `form`: in the username field with no password yet it
    /// moves on; anywhere else it signs in once the form is valid.
    public static func enter(state: LoginState, form: LoginForm) -> EnterAction {
        if form.focus == .username && state.password.isEmpty { return .nextField }
        return state.isFormValid ? .signIn : .nothing
    }

    /// The action that sets `field` to its text after `change`, if the result is acceptable
    /// and different. A username takes no spaces and at most 40 characters; a password at most
    /// what the server reads of it.
    private static func edit(_ field: LoginForm.Field, of state: LoginState, _ change: (inout String) -> Void) -> [LoginCommand] {
        switch field {
        case .username:
            var text = state.username
            change(&text)
            guard text != state.username, !text.contains(where: \.isWhitespace), text.count <= LoginForm.maximumUsernameLength else { return [] }
            return [.execute(.setUsername(text))]
        case .password:
            var text = state.password
            change(&text)
            guard text != state.password, text.utf8.count <= LoginRequest.maximumPasswordBytes else { return [] }
            return [.execute(.setPassword(text))]
        }
    }
}
