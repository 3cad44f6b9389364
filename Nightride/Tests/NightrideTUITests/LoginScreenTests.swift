import Foundation
import NightrideClient
import NightrideHarness
import NightrideServer
import NightrideTUI
import StateLoopViewModel
import Testing

/// The login screen's parts: keys and frame as pure functions, and the view model with
/// Nightride's service against a real server on loopback.
@Suite("Terminal UI: login screen")
struct LoginScreenTests {
    private func state(_ username: String, _ password: String) -> LoginState {
        var state = LoginState()
        state.username = username
        state.password = password
        return state
    }

    // MARK: Keys

    @Test("characters go to the focused field; a username takes no spaces; Backspace and Ctrl-U edit")
    func typing() {
        let empty = LoginState()
        #expect(LoginKeyMap.handle(.character("a"), state: empty, form: LoginForm(), isLoading: false).commands == [.execute(.setUsername("a"))])
        #expect(LoginKeyMap.handle(.character(" "), state: empty, form: LoginForm(), isLoading: false).commands == [])
        let typed = state("alice", "pw")
        let onPassword = LoginForm(focus: .password)
        #expect(LoginKeyMap.handle(.character(" "), state: typed, form: onPassword, isLoading: false).commands == [.execute(.setPassword("pw "))])
        #expect(LoginKeyMap.handle(.backspace, state: typed, form: LoginForm(), isLoading: false).commands == [.execute(.setUsername("alic"))])
        #expect(LoginKeyMap.handle(.control("u"), state: typed, form: onPassword, isLoading: false).commands == [.execute(.setPassword(""))])
        #expect(LoginKeyMap.handle(.backspace, state: empty, form: onPassword, isLoading: false).commands == [])
        // Letters that are commands elsewhere are text here.
        #expect(LoginKeyMap.handle(.character("q"), state: typed, form: LoginForm(), isLoading: false).commands == [.execute(.setUsername("aliceq"))])
        // The server's limits are kept while typing, so that a valid form is never refused for its length.
        let longName = state(String(repeating: "n", count: LoginForm.maximumUsernameLength), "")
        #expect(LoginKeyMap.handle(.character("n"), state: longName, form: LoginForm(), isLoading: false).commands == [])
        let longPassword = state("alice", String(repeating: "é", count: 36))
        #expect(LoginKeyMap.handle(.character("x"), state: longPassword, form: onPassword, isLoading: false).commands == [])
    }

    @Test("Tab and the arrows switch fields; Enter moves on from the username, signs in only with a valid form")
    func submitting() {
        var form = LoginKeyMap.handle(.tab, state: LoginState(), form: LoginForm(), isLoading: false).form
        #expect(form.focus == .password)
        form = LoginKeyMap.handle(.up, state: LoginState(), form: form, isLoading: false).form
        #expect(form.focus == .username)

        // Enter in the username field with no password yet: to the password field.
        let (next, none) = LoginKeyMap.handle(.enter, state: state("alice", ""), form: LoginForm(), isLoading: false)
        #expect(next.focus == .password && none.isEmpty)
        // The seed's rule: more than 4 characters of username, more than 2 of password.
        #expect(LoginKeyMap.handle(.enter, state: state("alic", "pw1"), form: LoginForm(focus: .password), isLoading: false).commands == [])
        #expect(LoginKeyMap.handle(.enter, state: state("alice", "pw"), form: LoginForm(focus: .password), isLoading: false).commands == [])
        let (cleared, commands) = LoginKeyMap.handle(
            .enter, state: state("alice", "pw1"), form: LoginForm(focus: .password, error: "old"), isLoading: false)
        #expect(commands == [.execute(.login)])
        #expect(cleared.error == nil, "a new attempt clears the last error")
        // From the username field too, once a password is there.
        #expect(LoginKeyMap.handle(.enter, state: state("alice", "pw1"), form: LoginForm(), isLoading: false).commands == [.execute(.login)])
    }

    @Test("while signing in the fields are locked and Enter does nothing; Esc and Ctrl-C always leave")
    func locked() {
        let typed = state("alice", "pw1")
        for key in [Key.enter, .character("x"), .backspace, .tab] {
            let (form, commands) = LoginKeyMap.handle(key, state: typed, form: LoginForm(focus: .password), isLoading: true)
            #expect(commands.isEmpty && form.focus == .password, "\(key)")
        }
        #expect(LoginKeyMap.handle(.escape, state: typed, form: LoginForm(), isLoading: true).commands == [.quit])
        #expect(LoginKeyMap.handle(.control("c"), state: typed, form: LoginForm(), isLoading: false).commands == [.quit])
        #expect(LoginKeyMap.handle(.control("l"), state: typed, form: LoginForm(), isLoading: true).commands == [.redraw])
    }

    // MARK: Frame

    private func frame(_ state: LoginState, _ form: LoginForm = LoginForm(), isLoading: Bool = false, width: Int = 100, height: Int = 24) -> [String]
    {
        let lines = renderLogin(state, form, isLoading: isLoading, server: "127.0.0.1:8080", width: width, height: height)
        #expect(lines.count == height)
        #expect(lines.allSatisfy { $0.count == width }, "every line is exactly \(width) columns")
        return lines
    }

    @Test("the frame: fields with the focus, the password masked, the rule until the form is valid")
    func fields() {
        let invalid = frame(state("ali", "pw"))
        #expect(invalid[0].hasPrefix(" Nightride · sign in") && invalid[0].hasSuffix("127.0.0.1:8080 "))
        #expect(invalid.contains { $0.hasPrefix("  > Username  [ali_ ") })
        #expect(invalid.contains { $0.hasPrefix("    Password  [**   ") })
        #expect(!invalid.joined().contains("pw"), "the password never shows")
        #expect(invalid.contains { $0.contains("A username has 5 characters or more") })
        #expect(invalid.last!.hasPrefix(" Tab next field · Esc quit "), "Enter does nothing while the form is invalid, and says nothing")
        #expect(frame(state("ali", "")).last!.hasPrefix(" Tab next field · Enter next · Esc quit"))
        // The name focused with a valid form: Enter signs in, and the help says so.
        let ready = frame(state("alice", "pw1"), LoginForm(focus: .username))
        #expect(ready.last!.hasPrefix(" Tab next field · Enter sign in · Esc quit"))
        #expect(
            LoginKeyMap.handle(.enter, state: state("alice", "pw1"), form: LoginForm(focus: .username), isLoading: false).commands == [
                .execute(.login)
            ])

        let valid = frame(state("alice", "pw1"), LoginForm(focus: .password))
        #expect(valid.contains { $0.hasPrefix("  > Password  [***_ ") })
        #expect(valid.contains { $0.hasPrefix("    Enter to sign in") })
        #expect(valid.last!.hasPrefix(" Tab next field · Enter sign in · Esc quit"))
        // Any size, down to the smallest.
        for (width, height) in [(20, 4), (30, 10), (200, 60), (5, 2)] {
            _ = frame(state("alice", "pw1"), width: width, height: height)
        }
    }

    @Test("the status line shows each output: signing in, the refusal, an error")
    func status() {
        let typed = state("alice", "pw1")
        #expect(frame(typed, isLoading: true)[22] == fit(" Signing in…"))
        #expect(!frame(typed, LoginForm(focus: .password), isLoading: true).contains { $0.contains("_") }, "no cursor while locked")
        var refused = typed
        refused.refused = true
        #expect(frame(refused)[22] == fit(" Wrong password for this username"))
        #expect(frame(refused, LoginForm(error: "cannot reach the server"))[22] == fit(" Error: cannot reach the server"))
        #expect(frame(typed)[22] == fit(""))
    }

    private func fit(_ text: String, width: Int = 100) -> String {
        text + String(repeating: " ", count: width - text.count)
    }

    // MARK: The view model against the server

    @Test("the view model with Nightride's service: a new name signs up, a wrong password is refused, a dead server is an error")
    @MainActor
    func againstTheServer() async throws {
        let server = NightrideServer(configuration: .init(port: 0))
        let port = try await server.start()
        let url = try #require(URL(string: "http://127.0.0.1:\(port)"))
        let viewModel = ViewModel(Login(service: .nightride(server: url)))

        func signIn(_ username: String, _ password: String) async -> LoginState? {
            let completions = viewModel.actionCompletions
            viewModel.execute(.setUsername(username))
            viewModel.execute(.setPassword(password))
            viewModel.execute(.login)
            #expect(viewModel.isLoading, "the spinner shows at once")
            for await completion in completions where completion.action == .login {
                return completion.state
            }
            return nil
        }

        let signedUp = try #require(await signIn("alice", "s3cret"))
        let token = try #require(signedUp.token)
        #expect(signedUp.message == "Signed in")
        #expect(try await server.user(forToken: token) == "alice")
        #expect(!viewModel.isLoading)

        let wrong = try #require(await signIn("alice", "guess"))
        #expect(wrong.token == nil && wrong.refused)
        #expect(wrong.message == "Wrong password for this username")

        let again = try #require(await signIn("alice", "s3cret"))
        #expect(again.token != nil && again.token != token, "each login is a session of its own")

        await server.stop()
        let errors = viewModel.errors
        let failures = viewModel.actionFailures
        viewModel.execute(.login)
        var failedAction: LoginAction?
        for await failure in failures {
            failedAction = failure.action
            break
        }
        var thrown: (any Error)?
        for await error in errors {
            thrown = error
            break
        }
        #expect(failedAction == .login)
        let error = try #require(thrown)
        #expect((error as? LoginProblem)?.description.hasPrefix("cannot reach \(url.absoluteString): ") == true, "\(error)")
        #expect(!viewModel.isLoading, "the spinner hides after a failure too")
    }
}
