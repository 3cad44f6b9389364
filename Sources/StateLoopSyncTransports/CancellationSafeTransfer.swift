import Foundation
import Synchronization
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

extension URLSession {
    /// The answer to `request`, as `data(for:)` gives it, but safe to cancel at any moment.
    ///
    /// On Linux (swift-corelibs-foundation up to at least Swift 6.3.1), cancelling a task that
    /// awaits `data(for:)` can deadlock the process: the cancellation runs with the task's
    /// status locked and waits for the session's queue, while that queue, delivering the
    /// answer, waits for the task's status lock (swift-corelibs-foundation issue 5412). And
    /// `URLSessionTask.cancel()` itself crashes the process when the transfer completes between
    /// its check of the task's state and the failure it then delivers ("a task that is not in
    /// the registry"). Every StateLoop effect can be cancelled (that is how a changed request
    /// stops the old one), so the transports use this instead: a cancellation answers the
    /// caller at once with `URLError.cancelled` and leaves the transfer to finish on its own
    /// (within the request's `timeoutInterval`), its answer dropped. Only a transfer not yet
    /// started is cancelled, which cannot race its completion.
    ///
    /// - Throws: the transport's error, as `data(for:)` would (a cancelled call fails with
    ///   `URLError.cancelled`).
    public func cancellationSafeData(for request: URLRequest) async throws -> (Data, URLResponse) {
        let transfer = AbandonableTransfer<(Data, URLResponse)>()
        return try await withTaskCancellationHandler {
            try await withCheckedThrowingContinuation { continuation in
                let task = dataTask(with: request) { data, response, error in
                    if let data, let response {
                        transfer.finish(.success((data, response)))
                    } else {
                        transfer.finish(.failure(error ?? URLError(.badServerResponse)))
                    }
                }
                transfer.start(task, answering: continuation)
            }
        } onCancel: {
            transfer.abandon()
        }
    }
}

/// One transfer's caller, answered once: by the transfer's end, or at once by a cancellation,
/// which leaves the transfer to finish unheard (see `cancellationSafeData(for:)` for why it is
/// not cancelled). Shared by `cancellationSafeData(for:)` and `LimitedTransfers`.
final class AbandonableTransfer<Answer: Sendable>: Sendable {
    private struct State {
        var caller: CheckedContinuation<Answer, any Error>?
        var isAbandoned = false
    }

    private let state = Mutex<State>(State())

    /// Starts `task` for `caller`; when the call was cancelled before, cancels the task instead
    /// (never started, it cannot race its completion) and answers `URLError.cancelled`.
    func start(_ task: URLSessionTask, answering caller: CheckedContinuation<Answer, any Error>) {
        let abandoned = state.withLock { state in
            if !state.isAbandoned { state.caller = caller }
            return state.isAbandoned
        }
        if abandoned {
            task.stopFromAnotherQueue()
            caller.resume(throwing: URLError(.cancelled))
        } else {
            task.resume()
        }
    }

    /// The transfer's answer, for the caller if it still waits.
    func finish(_ answer: Result<Answer, any Error>) {
        state.withLock { state in
            defer { state.caller = nil }
            return state.caller
        }?.resume(with: answer)
    }

    /// The caller stops waiting: answered `URLError.cancelled` now, the transfer's answer
    /// dropped when it comes.
    func abandon() {
        state.withLock { state in
            state.isAbandoned = true
            defer { state.caller = nil }
            return state.caller
        }?.resume(throwing: URLError(.cancelled))
    }
}

extension URLSessionTask {
    /// Stops a transfer never started, or one whose body went over its limit (still receiving,
    /// far from its end); not a running transfer a caller gave up on (see
    /// `cancellationSafeData(for:)`). `cancel()` waits for the session's queue, so it runs on
    /// another queue.
    func stopFromAnotherQueue() {
        DispatchQueue.global().async { self.cancel() }
    }
}
