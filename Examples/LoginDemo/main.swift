import LoginFeature
import StateLoopViewModel

// The login screen without a screen: types credentials, taps "sign in", prints every output.
// Run it with `swift run login-demo`.

/// Waits for the first element of whichever stream yields first.
func firstOf(_ completions: AsyncStream<ActionUpdate<LoginAction, LoginState>>, _ failures: AsyncStream<ActionFailure<LoginAction>>) async -> String {
    await withTaskGroup(of: String.self) { group in
        group.addTask {
            for await completion in completions { return completion.state.message ?? "no answer" }
            return ""
        }
        group.addTask {
            for await failure in failures { return "failed: \(failure.error)" }
            return ""
        }
        defer { group.cancelAll() }
        return await group.next() ?? ""
    }
}

@MainActor
func demo() async {
    let viewModel = ViewModel(Login(service: .rules(clock: ContinuousClock(), latency: .milliseconds(300))))
    let loading = viewModel.loading
    let spinner = Task { for await shown in loading { print("  spinner:", shown ? "shown" : "hidden") } }
    for (username, password) in [("bob", "pw"), ("admin", "nope"), ("error", "error"), ("admin", "admin")] {
        print("typing \(username) / \(password)")
        viewModel.execute(.setUsername(username))
        viewModel.execute(.setPassword(password))
        print("  sign-in button:", viewModel.state.isFormValid ? "enabled" : "disabled")
        guard viewModel.state.isFormValid else { continue }
        let completions = viewModel.actionCompletions
        let failures = viewModel.actionFailures
        viewModel.execute(.login)
        print("  result:", await firstOf(completions, failures))
    }
    spinner.cancel()
}

await demo()
