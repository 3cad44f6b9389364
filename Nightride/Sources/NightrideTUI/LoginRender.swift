/// The login screen for `state`, as `height` lines of exactly `width` columns (plain text, like
/// ``render(_:_:width:height:)``).
///
/// The view model's outputs map onto it one to one: the fields and the sign-in rule from the
/// state, "Signing in…" while `isLoading`, the refusal message from the state, and an
/// unexpected error from the form (the view model's `errors` output).
///
/// The server's address, the typed name and the messages go through `terminalSafe(_:)`, so that
/// no control character in them reaches the terminal.
public func renderLogin(_ state: LoginState, _ form: LoginForm, isLoading: Bool, server: String, width: Int, height: Int) -> [String] {
    let width = max(width, 1)
    let height = max(height, 1)
    guard height >= 4, width >= 20 else {
        return fitted(["Nightride: the terminal is too small"], width: width, height: height)
    }
    let left = " Nightride · sign in"
    let right = terminalSafe(server) + " "
    let gap = width - left.count - right.count
    let title = gap >= 1 ? left + String(repeating: " ", count: gap) + right : left

    let fieldWidth = max(10, min(width - 16, 42))
    func field(_ label: String, _ text: String, _ which: LoginForm.Field) -> String {
        let focused = form.focus == which && !isLoading
        let typed = focused ? text + "_" : text
        let shown = typed.count > fieldWidth ? "…" + typed.suffix(fieldWidth - 1) : typed
        return (focused ? "  > " : "    ") + pad(label, to: 10) + "[" + pad(shown, to: fieldWidth) + "]"
    }
    var body = [
        "",
        "  Sign in. A name the server has not seen yet creates an account with this password.",
        "",
        // A pasted name may hold control characters.
        field("Username", terminalSafe(state.username), .username),
        field("Password", String(repeating: "*", count: state.password.count), .password),
        "",
    ]
    if state.isFormValid {
        body.append("    Enter to sign in")
    } else {
        body.append("    A username has 5 characters or more (no spaces), a password 3 or more.")
    }

    let status: String
    if isLoading {
        status = "Signing in…"
    } else if let error = form.error {
        status = "Error: " + terminalSafe(error)
    } else {
        // The server's refusal message.
        status = terminalSafe(state.message ?? "")
    }
    let enter =
        switch LoginKeyMap.enter(state: state, form: form) {
        case .nextField: " · Enter next"
        case .signIn: " · Enter sign in"
        case .nothing: ""
        }
    let keys = "Tab next field" + enter + " · Esc quit"

    return [fit(title, width: width)]
        + fitted(body, width: width, height: height - 3)
        + [fit(" " + status, width: width), fit(" " + keys, width: width)]
}
