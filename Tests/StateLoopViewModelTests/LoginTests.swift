import LoginFeature
import StateLoopTesting
import StateLoopViewModel
import Testing

/// The seed's login screen, driven through the view model's outputs on a virtual clock.
@MainActor
@Suite("login screen", .timeLimit(.minutes(4)))
struct LoginTests {
    let clock = TestClock()

    func makeViewModel() -> ViewModel<Login> {
        ViewModel(Login(service: .rules(clock: clock)))
    }

    @Test("the sign-in button is enabled only for a username longer than 4 and a password longer than 2")
    func formValidation() {
        let viewModel = makeViewModel()
        #expect(!viewModel.state.isFormValid)
        viewModel.execute(.setUsername("admin"))
        viewModel.execute(.setPassword("ab"))
        #expect(!viewModel.state.isFormValid)
        viewModel.execute(.setPassword("abc"))
        #expect(viewModel.state.isFormValid)
        viewModel.execute(.setUsername("adm"))
        #expect(!viewModel.state.isFormValid)
    }

    @Test("admin/admin signs in; the spinner shows only while the login runs")
    func successfulLogin() async {
        let viewModel = makeViewModel()
        var loading = viewModel.loading.makeAsyncIterator()
        var completions = viewModel.actionCompletions.makeAsyncIterator()
        #expect(await loading.next() == false)

        viewModel.execute(.setUsername("admin"))
        viewModel.execute(.setPassword("admin"))
        #expect(await completions.next()?.action == .setUsername("admin"))
        #expect(await completions.next()?.action == .setPassword("admin"))
        #expect(!viewModel.isLoading)

        viewModel.execute(.login)
        #expect(await loading.next() == true)
        await clock.waitForSleepers()
        await clock.advance(by: .seconds(1))
        let completion = await completions.next()
        #expect(completion?.action == .login)
        #expect(completion?.state.token == "token-admin")
        #expect(await loading.next() == false)
        #expect(viewModel.state.message == "Signed in")
    }

    @Test("other credentials are refused with a message, not an error")
    func wrongCredentials() async {
        let viewModel = makeViewModel()
        var completions = viewModel.actionCompletions.makeAsyncIterator()
        viewModel.execute(.setUsername("alice"))
        viewModel.execute(.setPassword("secret"))
        viewModel.execute(.login)
        await clock.waitForSleepers()
        await clock.advance(by: .seconds(1))
        while let completion = await completions.next(), completion.action != .login {}
        #expect(viewModel.state.message == "Wrong username or password")
        #expect(viewModel.state.token == nil)
    }

    @Test("error/error fails unexpectedly: reported on both error outputs, and the view model goes on")
    func unexpectedError() async {
        let viewModel = makeViewModel()
        var failures = viewModel.actionFailures.makeAsyncIterator()
        var errors = viewModel.errors.makeAsyncIterator()
        var loading = viewModel.loading.makeAsyncIterator()
        #expect(await loading.next() == false)
        viewModel.execute(.setUsername("error"))
        viewModel.execute(.setPassword("error"))
        viewModel.execute(.login)
        #expect(await loading.next() == true)
        await clock.waitForSleepers()
        await clock.advance(by: .seconds(1))
        let failure = await failures.next()
        #expect(failure?.action == .login)
        #expect(failure?.error as? UnexpectedLoginError == UnexpectedLoginError())
        #expect(await errors.next() as? UnexpectedLoginError == UnexpectedLoginError())
        #expect(await loading.next() == false)
        #expect(viewModel.state.message == nil)

        // Still alive: the next attempt signs in.
        viewModel.execute(.setUsername("admin"))
        viewModel.execute(.setPassword("admin"))
        viewModel.execute(.login)
        await clock.waitForSleepers()
        await clock.advance(by: .seconds(1))
        #expect(await loading.next() == true)
        #expect(await loading.next() == false)
        #expect(viewModel.state.token == "token-admin")
    }

    @Test("every reducer publishes the state, with its action")
    func actionUpdatesAndStates() async {
        let viewModel = makeViewModel()
        var updates = viewModel.actionUpdates.makeAsyncIterator()
        var states = viewModel.states.makeAsyncIterator()
        #expect(await states.next() == LoginState())
        viewModel.execute(.setUsername("admin"))
        let update = await updates.next()
        #expect(update?.action == .setUsername("admin"))
        #expect(update?.state.username == "admin")
        #expect(await states.next()?.username == "admin")
    }
}
