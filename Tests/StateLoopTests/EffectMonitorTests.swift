import StateLoop
import Testing

/// What a monitor learns of effects: each one started with the request it was started for,
/// cancelled when its request changes or the system stops, finished when its work returns.
@MainActor
@Suite("monitor: effects")
struct EffectMonitorTests {
    @Test("a query's new answer starts an effect for it and cancels the one before; stopping cancels what runs")
    func startsAndCancels() async {
        let log = EventLog<Counter, Counter.Event>()
        let system = waitingSystem(.react(query: \.request) { (_: Int, _: Send<Counter.Event>) in await waitForCancellation() }, log)
        system.send(.ask(7))
        system.send(.ask(8))
        system.send(.ask(nil))
        system.send(.ask(9))
        #expect(
            log.effects.filter { !$0.hasPrefix("finished") } == [
                "started 1 for 7", "cancelled 1", "started 2 for 8", "cancelled 2", "started 3 for 9",
            ])
        system.stop()
        #expect(log.effects.filter { !$0.hasPrefix("finished") }.last == "cancelled 3")
    }

    @Test("a set of requests: one effect per element, each cancelled when its element leaves")
    func setOfRequests() async {
        let log = EventLog<Counter, Counter.Event>()
        let system = waitingSystem(.react(queries: \.requests) { (_: Int, _: Send<Counter.Event>) in await waitForCancellation() }, log)
        system.send(.askAll([4]))
        system.send(.askAll([4, 5]))
        system.send(.askAll([5]))
        #expect(log.effects.filter { !$0.hasPrefix("finished") } == ["started 1 for 4", "started 2 for 5", "cancelled 1"])
        system.stop()
    }

    @Test("a command is an effect no request describes; its return is reported as finished")
    func commandFinishes() async {
        let log = EventLog<Counter, Counter.Event>()
        let system = System(initialState: Counter(), reduce: Counter.reduce, monitor: log)
        await system.run { _, send in await send(.increment) }.value
        #expect(log.effects == ["started 1", "finished 1"])
        #expect(system.state.count == 1)
    }

    @Test("an effect cancelled before it returns is reported cancelled, then finished once it returns")
    func cancelledThenFinished() async {
        let log = EventLog<Counter, Counter.Event>()
        let system = waitingSystem(.react(query: \.request) { (_: Int, _: Send<Counter.Event>) in await waitForCancellation() }, log)
        system.send(.ask(1))
        system.send(.ask(nil))
        let finished = await yieldUntil { log.effects.contains("finished 1") }
        #expect(finished, "\(log.effects)")
        #expect(log.effects == ["started 1 for 1", "cancelled 1", "finished 1"])
    }

    /// A counter with `feedback`, whose effects wait until cancelled, watched by `log`.
    private func waitingSystem(_ feedback: Feedback<Counter, Counter.Event>, _ log: EventLog<Counter, Counter.Event>) -> System<
        Counter, Counter.Event
    > {
        System(initialState: Counter(), reduce: Counter.reduce, feedbacks: [feedback], monitor: log)
    }
}
