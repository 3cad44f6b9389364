import StateLoopTesting
import StateLoopViewModel
import Testing

/// A screen with one slow action whose policy the tests choose.
struct Slow: ViewModelDefinition {
    struct State: Equatable, Sendable {
        var finished: [String] = []
    }

    let clock: TestClock
    let switchToLatest: Bool

    var initialState: State { State() }

    func showSpinner(_ action: String) -> Bool { true }

    func policy(for action: String) -> ActionPolicy {
        switchToLatest ? .switchToLatest(key: "load") : .concurrent
    }

    func reducers(for action: String) -> Reducers<State> {
        .run { _, emit in
            try await clock.sleep(for: .seconds(action.count))
            await emit { $0.finished.append(action) }
        }
    }
}

@MainActor
@Suite("view model", .timeLimit(.minutes(4)))
struct ViewModelTests {
    @Test("by default, sending an action again runs both, and loading stays true without a gap")
    func concurrentByDefault() async {
        let clock = TestClock()
        let viewModel = ViewModel(Slow(clock: clock, switchToLatest: false))
        var loading = viewModel.loading.makeAsyncIterator()
        var completions = viewModel.actionCompletions.makeAsyncIterator()
        #expect(await loading.next() == false)
        viewModel.execute("a")
        viewModel.execute("bb")
        #expect(await loading.next() == true)
        await clock.waitForSleepers(2)
        await clock.advance(by: .seconds(1))
        #expect(await completions.next()?.action == "a")
        #expect(viewModel.isLoading)
        await clock.advance(by: .seconds(1))
        #expect(await completions.next()?.action == "bb")
        // Two overlapping actions: one `true`, then one `false` at the very end.
        #expect(await loading.next() == false)
        #expect(viewModel.state.finished == ["a", "bb"])
    }

    @Test("with switchToLatest, sending again cancels the running action; it never applies")
    func switchToLatest() async {
        let clock = TestClock()
        let viewModel = ViewModel(Slow(clock: clock, switchToLatest: true))
        var completions = viewModel.actionCompletions.makeAsyncIterator()
        var loading = viewModel.loading.makeAsyncIterator()
        #expect(await loading.next() == false)
        viewModel.execute("a")
        await clock.waitForSleepers(1)
        viewModel.execute("bb")
        #expect(await loading.next() == true)
        await clock.waitForSleepers(1)
        #expect(clock.sleeperCount == 1)
        await clock.advance(by: .seconds(5))
        #expect(await completions.next()?.action == "bb")
        #expect(await loading.next() == false)
        #expect(viewModel.state.finished == ["bb"])
    }

    @Test("an output stops when the task consuming it is cancelled")
    func outputEndsWithItsTask() async {
        let viewModel = ViewModel(Slow(clock: TestClock(), switchToLatest: false))
        let states = viewModel.states
        let consumer = Task { for await _ in states {} }
        #expect(viewModel.subscriberCount == 1)
        consumer.cancel()
        await consumer.value
        // The subscriber leaves from a task on the shared pool, which a loaded machine may run
        // late: polled, with a hang guard.
        let deadline = ContinuousClock.now + .seconds(30)
        while viewModel.subscriberCount > 0, ContinuousClock.now < deadline { try? await Task.sleep(for: .milliseconds(5)) }
        #expect(viewModel.subscriberCount == 0)
    }

    @Test("releasing the view model cancels its running actions and ends its outputs")
    func releaseCancels() async {
        let clock = TestClock()
        var viewModel: ViewModel<Slow>? = ViewModel(Slow(clock: clock, switchToLatest: false))
        let states = viewModel!.states
        viewModel!.execute("a")
        await clock.waitForSleepers(1)
        weak let released = viewModel
        viewModel = nil
        #expect(released == nil)
        var ended = false
        for await _ in states {}
        ended = true
        #expect(ended)
        for _ in 0..<1_000 where clock.sleeperCount > 0 { await Task.yield() }
        #expect(clock.sleeperCount == 0)
    }
}
