import StateLoopSync
import Synchronization

/// A scripted backend: every pull waits until the test answers it, pushes and connectivity
/// changes are sent by hand.
final class FakeServer: Sendable {
    private struct PendingPull {
        let id: Int
        let continuation: CheckedContinuation<Versioned<String>, any Error>
    }

    private let pending = Mutex<[PendingPull]>([])
    private let counter = Mutex(0)
    let pushes: AsyncStream<PushMessage<String>>
    private let pushContinuation: AsyncStream<PushMessage<String>>.Continuation
    let connectivity: AsyncStream<Bool>
    private let connectivityContinuation: AsyncStream<Bool>.Continuation

    init() {
        (pushes, pushContinuation) = AsyncStream.makeStream(of: PushMessage<String>.self)
        (connectivity, connectivityContinuation) = AsyncStream.makeStream(of: Bool.self)
    }

    var sources: ResourceSources<String> {
        ResourceSources(pull: { try await self.pull() }, push: pushes, connectivity: connectivity)
    }

    /// How many pulls were made in all.
    var pullCount: Int { counter.withLock { $0 } }

    /// How many pulls wait for an answer.
    var waitingPulls: Int { pending.withLock { $0.count } }

    func pull() async throws -> Versioned<String> {
        let id = counter.withLock { count -> Int in
            count += 1
            return count
        }
        return try await withTaskCancellationHandler {
            try await withCheckedThrowingContinuation { continuation in
                pending.withLock { $0.append(PendingPull(id: id, continuation: continuation)) }
            }
        } onCancel: {
            let cancelled = pending.withLock { pulls -> PendingPull? in
                guard let index = pulls.firstIndex(where: { $0.id == id }) else { return nil }
                return pulls.remove(at: index)
            }
            cancelled?.continuation.resume(throwing: CancellationError())
        }
    }

    /// Answers the oldest waiting pull (or the one at `index`) with `value` at `version`.
    func answer(_ value: String, version: UInt64, epoch: UInt64 = 0, index: Int = 0) {
        take(index)?.continuation.resume(returning: Versioned(value, version: Version(epoch: epoch, counter: version)))
    }

    /// Answers every waiting pull with `value` at `version`; returns how many there were.
    @discardableResult
    func answerAll(_ value: String, version: UInt64) -> Int {
        var answered = 0
        while waitingPulls > 0 {
            answer(value, version: version)
            answered += 1
        }
        return answered
    }

    /// Fails the oldest waiting pull with `error`.
    func fail(_ error: any Error, index: Int = 0) {
        take(index)?.continuation.resume(throwing: error)
    }

    func push(_ value: String, version: UInt64) {
        pushContinuation.yield(.value(Versioned(value, version: Version(counter: version))))
    }

    func pushHint() {
        pushContinuation.yield(.changed)
    }

    func pushFailure(_ error: any Error) {
        pushContinuation.yield(.failed(error))
    }

    func setOnline(_ online: Bool) {
        connectivityContinuation.yield(online)
    }

    private func take(_ index: Int) -> PendingPull? {
        pending.withLock { pulls in pulls.indices.contains(index) ? pulls.remove(at: index) : nil }
    }
}

struct TransportError: Error, Equatable {}
