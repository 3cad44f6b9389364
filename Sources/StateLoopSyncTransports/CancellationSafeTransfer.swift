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
    /// answer, waits for the task's status lock (swift-corelibs-foundation issue 5412). Every
    /// StateLoop effect can be cancelled (that is how a changed request stops the old one),
    /// so the transports use this instead: the cancellation only *asks* for the transfer to
    /// stop, from another queue, and returns at once.
    ///
    /// - Throws: the transport's error, as `data(for:)` would (a cancelled transfer fails with
    ///   `URLError.cancelled`).
    public func cancellationSafeData(for request: URLRequest) async throws -> (Data, URLResponse) {
        let transfer = CancellableTransfer()
        return try await withTaskCancellationHandler {
            try await withCheckedThrowingContinuation { continuation in
                let task = dataTask(with: request) { data, response, error in
                    if let data, let response {
                        continuation.resume(returning: (data, response))
                    } else {
                        continuation.resume(throwing: error ?? URLError(.badServerResponse))
                    }
                }
                transfer.start(task)
            }
        } onCancel: {
            transfer.cancel()
        }
    }
}

/// One transfer's task and whether it was cancelled, for a cancellation that may come before
/// the task exists. Shared by `cancellationSafeData(for:)` and `LimitedTransfers`.
final class CancellableTransfer: Sendable {
    private struct State {
        var task: URLSessionDataTask?
        var isCancelled = false
    }

    private let state = Mutex<State>(State())

    func start(_ task: URLSessionDataTask) {
        let cancelled = state.withLock { state in
            state.task = task
            return state.isCancelled
        }
        task.resume()
        if cancelled { Self.stop(task) }
    }

    func cancel() {
        let task = state.withLock { state in
            state.isCancelled = true
            return state.task
        }
        if let task { Self.stop(task) }
    }

    /// `cancel()` waits for the session's queue: never from the cancelling thread.
    static func stop(_ task: URLSessionTask) {
        DispatchQueue.global().async { task.cancel() }
    }
}
