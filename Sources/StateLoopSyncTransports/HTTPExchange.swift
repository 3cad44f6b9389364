import Foundation
import StateLoopSync
import Synchronization
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// A response body larger than the client accepts (``HTTPPull`` and ``HTTPMutationSender``
/// take a `maximumResponseBytes`): the transfer is stopped as soon as that is known, so that a
/// server sending megabytes (by mistake, or to exhaust the client's memory) costs at most the
/// limit.
///
/// ``FailureKind/classify(_:)`` counts it as transient, like any error that is not an HTTP
/// status: the request is retried a few times, then given up.
public struct ResponseTooLargeError: Error, Hashable, Sendable, CustomStringConvertible {
    /// The largest body accepted, in bytes.
    public var limit: Int
    /// The size the server announced in `Content-Length`, when it announced one; `nil` when the
    /// body came without a length (chunked) and was cut once past the limit.
    public var declaredLength: Int?

    /// An error for a body over `limit`, announced as `declaredLength` bytes if it was.
    public init(limit: Int, declaredLength: Int? = nil) {
        self.limit = limit
        self.declaredLength = declaredLength
    }

    public var description: String {
        let declared = declaredLength.map { " (Content-Length: \($0))" } ?? ""
        return "response body larger than the \(limit) bytes accepted\(declared)"
    }
}

/// One HTTP request and its answer, as both HTTP transports make it: the body read up to a
/// limit, a status outside 200–299 turned into ``HTTPStatusError``.
enum HTTPExchange {
    /// Sends `request` and returns the body of its successful answer.
    ///
    /// - Throws: ``HTTPStatusError`` for a status outside 200–299 (whatever its body's size: the
    ///   body of an error is not read), ``ResponseTooLargeError`` for a successful answer over
    ///   `limit` bytes, or what `session` throws.
    static func body(of request: URLRequest, session: URLSession, limit: Int) async throws -> Data {
        let guardian = BodyLimit(limit: limit)
        let data: Data
        let response: URLResponse
        do {
            // Not `data(for:delegate:)`: cancelling it can deadlock on Linux (see
            // `cancellationSafeData(for:delegate:)`).
            (data, response) = try await session.cancellationSafeData(for: request, delegate: guardian)
        } catch {
            // The guardian cancelled the task: say why, rather than "cancelled".
            if let stopped = guardian.stopped { throw stopped }
            throw error
        }
        if let failure = statusError(response) { throw failure }
        // Where the session does not call the task's delegate (FoundationNetworking, for a task
        // with a completion handler), the whole body was read: the limit still holds, though
        // only after the fact, and a body that never ends is ended by the resource's
        // `requestTimeout`.
        guard data.count <= limit else {
            throw ResponseTooLargeError(limit: limit, declaredLength: declaredLength(of: response))
        }
        return data
    }

    /// The error for a status outside 200–299, with the server's `Retry-After` if usable.
    static func statusError(_ response: URLResponse) -> HTTPStatusError? {
        guard let http = response as? HTTPURLResponse, !(200...299).contains(http.statusCode) else { return nil }
        return HTTPStatusError(
            status: http.statusCode,
            retryAfter: RetryAfter.parse(http.value(forHTTPHeaderField: "Retry-After"))
        )
    }

    /// `Content-Length`, when the response has one.
    static func declaredLength(of response: URLResponse) -> Int? {
        response.expectedContentLength >= 0 ? Int(response.expectedContentLength) : nil
    }
}

/// Watches one task's body as it arrives and cancels the task once the body is known to exceed
/// the limit: from `Content-Length` as soon as the response head is in, or as the bytes add up.
///
/// FoundationNetworking (Linux) has no `bytes(for:)`, and a session delegate of our own would
/// replace the caller's session; but it does call the delegate given to `data(for:delegate:)`
/// with each chunk, which is enough to stop reading. `data(for:delegate:)` then throws
/// "cancelled", and ``stopped`` says why.
///
/// How early that is depends on the link: the delegate learns of the chunk past the limit at
/// once, but `cancel()` waits its turn on FoundationNetworking's work queue behind libcurl's
/// reads (20–50 ms on loopback, measured), and libcurl cannot be paused meanwhile. Over a
/// network that is a little past the limit; on loopback, where libcurl reads gigabytes a
/// second, an endless body was cut after tens of megabytes (up to ~200 MB). It does stop, which
/// reading the whole body first never would.
final class BodyLimit: NSObject, URLSessionDataDelegate, Sendable {
    private let limit: Int
    private let state = Mutex<(received: Int, stopped: (any Error & Sendable)?)>((0, nil))

    init(limit: Int) {
        self.limit = limit
    }

    /// Why the task was cancelled, if this cancelled it.
    var stopped: (any Error & Sendable)? {
        state.withLock { $0.stopped }
    }

    func urlSession(
        _ session: URLSession,
        dataTask: URLSessionDataTask,
        didReceive response: URLResponse,
        completionHandler: @escaping @Sendable (URLSession.ResponseDisposition) -> Void
    ) {
        completionHandler(stopIfOver(response: response, received: nil) ? .cancel : .allow)
    }

    func urlSession(_ session: URLSession, dataTask: URLSessionDataTask, didReceive data: Data) {
        let received = state.withLock { state in
            state.received += data.count
            return state.received
        }
        if let response = dataTask.response, stopIfOver(response: response, received: received) {
            dataTask.cancel()
        }
    }

    /// Records why to stop after `received` bytes of `response` (or its `Content-Length`, before
    /// the body), and returns true the first time there is a reason: an error status needs no
    /// body past the limit, and a success may not have one.
    private func stopIfOver(response: URLResponse, received: Int?) -> Bool {
        let declared = HTTPExchange.declaredLength(of: response)
        guard let size = received ?? declared, size > limit else { return false }
        let reason: any Error & Sendable =
            HTTPExchange.statusError(response) ?? ResponseTooLargeError(limit: limit, declaredLength: declared)
        return state.withLock { state in
            guard state.stopped == nil else { return false }
            state.stopped = reason
            return true
        }
    }
}
