import Foundation
import Synchronization
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// Transfers whose body is measured as it arrives, and cut as soon as it passes its limit: a
/// server that sends megabytes (or never stops) costs the client at most the limit.
///
/// On Linux, FoundationNetworking calls a per-task delegate only from `data(for:delegate:)`,
/// whose cancellation can deadlock (see `cancellationSafeData(for:)`). So the bytes come to a
/// session-level delegate instead: one delegate session per session the app gave, with the same
/// configuration (and so the same headers, timeouts and cookies), kept for the process's life
/// as `URLSession.shared` is. A body over its limit stops the transfer, from another queue; the
/// caller's cancellation answers it at once and leaves the transfer to finish unheard, as
/// `cancellationSafeData(for:)` does.
final class LimitedTransfers: Sendable {
    private let session: URLSession
    private let delegate: Delegate

    private init(configuration: URLSessionConfiguration) {
        delegate = Delegate()
        session = URLSession(configuration: configuration, delegate: delegate, delegateQueue: nil)
    }

    private static let sessions = Mutex<[ObjectIdentifier: LimitedTransfers]>([:])

    /// The delegate session for `base`, made on first use.
    static func forSession(_ base: URLSession) -> LimitedTransfers {
        sessions.withLock { sessions in
            if let existing = sessions[ObjectIdentifier(base)] { return existing }
            let made = LimitedTransfers(configuration: base.configuration)
            sessions[ObjectIdentifier(base)] = made
            return made
        }
    }

    /// The answer to `request`: for a status in 200–299, the body (throws
    /// ``ResponseTooLargeError`` once it passes `limit` bytes, or as soon as `Content-Length`
    /// announces more); for any other status, an empty body, the rest of it not read.
    func data(for request: URLRequest, limit: Int) async throws -> (Data, URLResponse) {
        let transfer = AbandonableTransfer<(Data, URLResponse)>()
        return try await withTaskCancellationHandler {
            try await withCheckedThrowingContinuation { continuation in
                let task = session.dataTask(with: request)
                delegate.register(task, limit: limit) { transfer.finish($0) }
                transfer.start(task, answering: continuation)
            }
        } onCancel: {
            transfer.abandon()
        }
    }

    /// Collects each transfer's bytes and ends it; one for all the session's transfers, keyed
    /// by task identifier.
    private final class Delegate: NSObject, URLSessionDataDelegate, Sendable {
        private struct Transfer {
            let limit: Int
            let answer: @Sendable (Result<(Data, URLResponse), any Error>) -> Void
            var data = Data()
            var response: URLResponse?
            /// Set once the limit is passed: the transfer ends with ``ResponseTooLargeError``.
            var tooLarge = false
            /// Set for a status outside 200–299: only the status matters, the body is dropped.
            var statusOnly = false
        }

        private let transfers = Mutex<[Int: Transfer]>([:])

        func register(_ task: URLSessionDataTask, limit: Int, answer: @escaping @Sendable (Result<(Data, URLResponse), any Error>) -> Void) {
            transfers.withLock { $0[task.taskIdentifier] = Transfer(limit: limit, answer: answer) }
        }

        func urlSession(
            _ session: URLSession, dataTask: URLSessionDataTask, didReceive response: URLResponse,
            completionHandler: @escaping (URLSession.ResponseDisposition) -> Void
        ) {
            let stop = transfers.withLock { transfers -> Bool in
                guard var transfer = transfers[dataTask.taskIdentifier] else { return false }
                transfer.response = response
                if HTTPExchange.statusError(response) != nil {
                    transfer.statusOnly = true
                } else if let declared = HTTPExchange.declaredLength(of: response), declared > transfer.limit {
                    transfer.tooLarge = true
                }
                transfers[dataTask.taskIdentifier] = transfer
                return transfer.statusOnly || transfer.tooLarge
            }
            completionHandler(stop ? .cancel : .allow)
        }

        func urlSession(_ session: URLSession, dataTask: URLSessionDataTask, didReceive data: Data) {
            let overLimit = transfers.withLock { transfers -> Bool in
                guard var transfer = transfers[dataTask.taskIdentifier], !transfer.tooLarge, !transfer.statusOnly else { return false }
                transfer.data.append(data)
                transfer.tooLarge = transfer.data.count > transfer.limit
                if transfer.tooLarge { transfer.data = Data() }
                transfers[dataTask.taskIdentifier] = transfer
                return transfer.tooLarge
            }
            if overLimit { dataTask.stopFromAnotherQueue() }
        }

        func urlSession(_ session: URLSession, task: URLSessionTask, didCompleteWithError error: (any Error)?) {
            guard let transfer = transfers.withLock({ $0.removeValue(forKey: task.taskIdentifier) }) else { return }
            if transfer.tooLarge {
                let declared = transfer.response.flatMap(HTTPExchange.declaredLength(of:))
                transfer.answer(.failure(ResponseTooLargeError(limit: transfer.limit, declaredLength: declared)))
            } else if transfer.statusOnly, let response = transfer.response {
                transfer.answer(.success((Data(), response)))
            } else if let error {
                transfer.answer(.failure(error))
            } else if let response = transfer.response {
                transfer.answer(.success((transfer.data, response)))
            } else {
                transfer.answer(.failure(URLError(.badServerResponse)))
            }
        }
    }
}
