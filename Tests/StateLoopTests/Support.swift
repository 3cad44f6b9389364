import StateLoop
import Synchronization

/// A counter feature used across the core tests.
struct Counter: Hashable, Sendable {
    var count = 0
    var request: Int?
    var requests: Set<Int> = []
    var loaded: [Int] = []
    var errors: [String] = []

    enum Event: Hashable, Sendable {
        case increment
        case add(Int)
        case ask(Int?)
        case askAll(Set<Int>)
        case loaded(Int)
        case failed(String)
    }

    static func reduce(_ state: inout Counter, _ event: Event) {
        switch event {
        case .increment: state.count += 1
        case .add(let amount): state.count += amount
        case .ask(let request): state.request = request
        case .askAll(let requests): state.requests = requests
        case .loaded(let value): state.loaded.append(value)
        case .failed(let message): state.errors.append(message)
        }
    }
}

/// A thread-safe box for values that effects and tests share.
final class Shared<Value: Sendable>: Sendable {
    private let storage: Mutex<Value>

    init(_ value: Value) {
        storage = Mutex(value)
    }

    var value: Value {
        storage.withLock { $0 }
    }

    func update<Result>(_ body: (inout Value) -> Result) -> Result {
        storage.withLock { body(&$0) }
    }
}

/// A signal a test can await: effects call `fire`, the test awaits `next()`.
struct Signal<Value: Sendable>: Sendable {
    let stream: AsyncStream<Value>
    let continuation: AsyncStream<Value>.Continuation

    init() {
        (stream, continuation) = AsyncStream.makeStream(of: Value.self)
    }

    func fire(_ value: Value) {
        continuation.yield(value)
    }

    func next() async -> Value? {
        var iterator = stream.makeAsyncIterator()
        return await iterator.next()
    }
}

/// Suspends until the task is cancelled.
func waitForCancellation() async {
    let (never, _) = AsyncStream.makeStream(of: Void.self)
    for await _ in never {}
}

/// Lets other tasks run until `condition` holds: `maxYields` yields first (effects on an idle
/// machine need a few), then short sleeps up to a 30 s hang guard, since work on the shared pool
/// can wait longer than any number of yields on a loaded machine. Returns whether the condition
/// held.
@MainActor
func yieldUntil(_ maxYields: Int = 100_000, _ condition: () -> Bool) async -> Bool {
    for _ in 0..<maxYields {
        if condition() { return true }
        await Task.yield()
    }
    let deadline = ContinuousClock.now + .seconds(30)
    while !condition(), ContinuousClock.now < deadline {
        try? await Task.sleep(for: .milliseconds(5))
    }
    return condition()
}

/// Records everything a system reduces and discards, and what its effects do.
final class EventLog<State, Event>: SystemMonitor {
    var reduced: [(event: Event, source: EventSource, state: State)] = []
    var discarded: [(event: Event, reason: DiscardReason)] = []
    /// "started 1 for 3", "cancelled 1", "finished 1", in order.
    var effects: [String] = []

    func system(didStartEffect effect: EffectID, request: (any Sendable)?) {
        effects.append("started \(effect.rawValue)" + (request.map { " for \($0)" } ?? ""))
    }

    func system(didCancelEffect effect: EffectID) {
        effects.append("cancelled \(effect.rawValue)")
    }

    func system(didFinishEffect effect: EffectID) {
        effects.append("finished \(effect.rawValue)")
    }

    func system(didReduce event: Event, source: EventSource, into state: State) {
        reduced.append((event, source, state))
    }

    func system(didDiscard event: Event, reason: DiscardReason) {
        discarded.append((event, reason))
    }
}
