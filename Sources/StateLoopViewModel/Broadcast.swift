import StateLoop

/// Hands every value to any number of `AsyncStream` subscribers.
///
/// Threading: ``yield(_:)``, ``subscribe(bufferingPolicy:)`` and ``finish()`` are called on the
/// view model's actor. A subscriber that stops iterating (its task was cancelled) is removed by a
/// hop back to that actor, so a view's subscription ends with the view's task.
final class Broadcast<Value: Sendable>: @unchecked Sendable {
    private let isolation: any Actor
    private var subscribers: [UInt64: AsyncStream<Value>.Continuation] = [:]
    private var lastID: UInt64 = 0
    private var isFinished = false

    init(isolation: any Actor) {
        self.isolation = isolation
    }

    var subscriberCount: Int {
        subscribers.count
    }

    func subscribe(
        startingWith first: Value? = nil,
        bufferingPolicy: AsyncStream<Value>.Continuation.BufferingPolicy
    ) -> AsyncStream<Value> {
        let (stream, continuation) = AsyncStream.makeStream(of: Value.self, bufferingPolicy: bufferingPolicy)
        if let first {
            continuation.yield(first)
        }
        guard !isFinished else {
            continuation.finish()
            return stream
        }
        lastID += 1
        let id = lastID
        subscribers[id] = continuation
        // A strong reference: `finish()` ends every stream, which releases this closure.
        continuation.onTermination = { [self] _ in
            Task { await perform(on: isolation) { self.subscribers[id] = nil } }
        }
        return stream
    }

    func yield(_ value: Value) {
        for continuation in subscribers.values {
            continuation.yield(value)
        }
    }

    func finish() {
        isFinished = true
        let finished = subscribers
        subscribers = [:]
        for continuation in finished.values {
            continuation.finish()
        }
    }
}
