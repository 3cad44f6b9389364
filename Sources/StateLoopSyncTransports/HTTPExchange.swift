import Foundation
import StateLoopSync
import Synchronization
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// A response body larger than the client accepts (``HTTPPull`` and ``HTTPMutationSender``
/// take a `maximumResponseBytes`), so that a server sending megabytes (by mistake, or to
/// exhaust the client's memory) is refused rather than decoded and kept: a body announced
/// larger in `Content-Length` is not read at all, one that comes without a length is cut as
/// soon as it passes the limit, so an endless body costs the client the limit and no more.
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
        // Measured as it arrives, and cut once past the limit (see `LimitedTransfers`).
        let (data, response) = try await LimitedTransfers.forSession(session).data(for: request, limit: limit)
        if let failure = statusError(response) { throw failure }
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
