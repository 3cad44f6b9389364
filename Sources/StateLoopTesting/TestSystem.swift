import CustomDump
import StateLoop
import Testing

/// Drives a `System` step by step in a test and checks every step.
///
/// ```swift
/// let clock = TestClock()
/// let store = await TestSystem(
///     initialState: Search(),
///     reduce: Search.reduce,
///     feedbacks: Search.feedbacks(api: .fake, clock: clock),
///     clock: clock
/// )
/// await store.send(.typed("swift")) { $0.query = "swift" }
/// await clock.advance(by: .milliseconds(300))
/// await store.receive(.loaded(["swift"])) { $0.results = ["swift"] }
/// await store.finish()
/// ```
///
/// Each call returns once the system has settled: every effect has run until it waits on the
/// ``TestClock``, on a fake that the test controls, or has finished. No call waits on the real
/// clock.
///
/// Exhaustive by default: ``send(_:assert:sourceLocation:)`` and
/// ``receive(_:assert:sourceLocation:)`` fail when the state differs from the expectation in
/// any way, sending fails while events that effects sent back are still unasserted, and
/// ``finish(sourceLocation:)`` fails when such events remain or an effect is still running. Set
/// ``exhaustivity`` to `.off` to check only what each step's `assert` describes.
///
/// The system and its effects run on an executor of the test system's own, so effects that hop
/// to another actor (a `bind` feedback rendering on the main actor, a fake that is an actor with
/// its own executor) are outside what ``settle()`` can wait for.
public actor TestSystem<State: Equatable & Sendable, Event: Equatable & Sendable> {
    private nonisolated let executor: TestExecutor
    private let recorder = Recorder<State, Event>()
    private var system: System<State, Event>?
    /// The state the next assertion starts from: the state after the last asserted event.
    private var assertedState: State

    /// Whether unasserted events, unasserted state changes and running effects fail the test.
    public var exhaustivity: Exhaustivity = .on

    /// Creates the system under test on the test system's executor and lets its first effects
    /// run until they wait.
    ///
    /// - Parameters:
    ///   - initialState: The state before any event, and the state the first assertion
    ///     starts from.
    ///   - reduce: Applies one event to the state, as in the system under test.
    ///   - feedbacks: The loops that observe the state and run effects, on the test system's
    ///     executor.
    ///   - clock: The clock the feedbacks sleep on, if any. Advancing it waits until
    ///     this system has settled after every wake-up.
    public init(
        initialState: State,
        reduce: @escaping @Sendable (inout State, Event) -> Void,
        feedbacks: [Feedback<State, Event>] = [],
        clock: TestClock? = nil
    ) async {
        let executor = TestExecutor()
        self.executor = executor
        self.assertedState = initialState
        clock?.onAdvance { await executor.settle() }
        system = System(
            initialState: initialState,
            reduce: reduce,
            feedbacks: feedbacks,
            monitor: recorder,
            effectExecutor: executor,
            isolation: self
        )
        await executor.settle()
    }

    public nonisolated var unownedExecutor: UnownedSerialExecutor {
        executor.asUnownedSerialExecutor()
    }

    /// The system's current state.
    public var state: State {
        liveSystem.state
    }

    /// Effects and commands whose task has not returned yet.
    public var runningEffectCount: Int {
        liveSystem.runningTaskCount
    }

    /// Events that effects sent back and that no ``receive(_:assert:sourceLocation:)`` has
    /// asserted yet, oldest first.
    public var unassertedEvents: [Event] {
        recorder.records.map(\.event)
    }

    /// Sends `event`, lets the system settle, and checks that the state after `event` equals the
    /// state before it changed by `assert`.
    public func send(
        _ event: Event,
        assert expectedChange: (@Sendable (inout State) -> Void)? = nil,
        sourceLocation: SourceLocation = #_sourceLocation
    ) async {
        if exhaustivity == .on && !recorder.records.isEmpty {
            Issue.record(
                """
                Sent \(describe(event)) while events sent back by effects were not asserted yet:
                \(recorder.records.map { "  " + describe($0.event) }.joined(separator: "\n"))
                Assert them first with `await store.receive(…)`, or set `exhaustivity = .off`.
                """,
                sourceLocation: sourceLocation
            )
        }
        catchUp()
        liveSystem.send(event)
        guard let record = recorder.records.first, record.source == .sent, record.event == event else {
            Issue.record("The system did not reduce \(describe(event)): it has stopped.", sourceLocation: sourceLocation)
            return
        }
        recorder.records.removeFirst()
        check(record, against: expectedChange, step: "sending \(describe(event))", sourceLocation: sourceLocation)
        await executor.settle()
    }

    /// Lets the system settle, then checks that the next event an effect sent back is `event`
    /// and that the state after it equals the state before it changed by `assert`.
    public func receive(
        _ event: Event,
        assert expectedChange: (@Sendable (inout State) -> Void)? = nil,
        sourceLocation: SourceLocation = #_sourceLocation
    ) async {
        await executor.settle()
        guard !recorder.records.isEmpty else {
            Issue.record(
                """
                Expected to receive \(describe(event)), but no effect sent an event back and the \
                system is idle (\(liveSystem.runningTaskCount) effect(s) still running). If an \
                effect waits on a TestClock, advance the clock first.
                """,
                sourceLocation: sourceLocation
            )
            return
        }
        let record = recorder.records.removeFirst()
        if record.event != event {
            let difference = diff(event, record.event).map { "\n\($0)" } ?? ""
            Issue.record(
                "Received an unexpected event (− expected, + received):\(difference)",
                sourceLocation: sourceLocation
            )
        }
        check(record, against: expectedChange, step: "receiving \(describe(event))", sourceLocation: sourceLocation)
    }

    /// Lets every running effect go on until it waits or finishes.
    public func settle() async {
        await executor.settle()
    }

    /// Runs `command` on the system under test and lets the system settle.
    public func execute<C: Command>(_ command: C) async where C.State == State, C.Event == Event {
        liveSystem.execute(command)
        await executor.settle()
    }

    /// Marks every unasserted event as asserted, and moves the expectation to the current state.
    public func skipReceivedEvents() {
        catchUp()
    }

    /// Ends the test: fails when events sent back by effects were not asserted or when an
    /// effect is still running (with ``exhaustivity`` on), then stops the system.
    public func finish(sourceLocation: SourceLocation = #_sourceLocation) async {
        await executor.settle()
        if exhaustivity == .on {
            if !recorder.records.isEmpty {
                Issue.record(
                    """
                    The test ended with events sent back by effects that were not asserted:
                    \(recorder.records.map { "  " + describe($0.event) }.joined(separator: "\n"))
                    Assert them with `await store.receive(…)`, or set `exhaustivity = .off`.
                    """,
                    sourceLocation: sourceLocation
                )
            }
            let running = liveSystem.runningTaskCount
            if running > 0 {
                Issue.record(
                    """
                    The test ended with \(running) effect(s) still running. Send the events that \
                    make the state stop asking for them, advance the clock until they finish, or \
                    set `exhaustivity = .off`.
                    """,
                    sourceLocation: sourceLocation
                )
            }
        }
        liveSystem.stop()
        await executor.settle()
    }

    /// Stops the system: cancels every effect. Later steps fail.
    public func stop() async {
        liveSystem.stop()
        await executor.settle()
    }

    // MARK: Private

    private var liveSystem: System<State, Event> {
        guard let system else { preconditionFailure("TestSystem is used before its initializer returned.") }
        return system
    }

    private func catchUp() {
        recorder.records.removeAll()
        assertedState = liveSystem.state
    }

    private func check(
        _ record: Recorder<State, Event>.Record,
        against expectedChange: (@Sendable (inout State) -> Void)?,
        step: String,
        sourceLocation: SourceLocation
    ) {
        var expected = assertedState
        expectedChange?(&expected)
        assertedState = record.state
        if exhaustivity == .off && expectedChange == nil {
            return
        }
        if expected != record.state {
            let difference = diff(expected, record.state).map { "\n\($0)" } ?? ""
            Issue.record(
                "The state after \(step) is not the expected one (− expected, + actual):\(difference)",
                sourceLocation: sourceLocation
            )
        }
    }

    private func describe(_ value: some Any) -> String {
        var output = ""
        customDump(value, to: &output, maxDepth: 2)
        return output
    }
}

/// How strictly a ``TestSystem`` checks a test.
public enum Exhaustivity: Sendable, Hashable {
    /// Every state change, every event sent back and every running effect must be asserted.
    case on
    /// Only what each step describes is checked.
    case off
}

/// Records what the system under test reduces. Lives on the test system's actor.
final class Recorder<State, Event>: SystemMonitor {
    struct Record {
        let event: Event
        let source: EventSource
        let state: State
    }

    var records: [Record] = []

    func system(didReduce event: Event, source: EventSource, into state: State) {
        records.append(Record(event: event, source: source, state: state))
    }
}
