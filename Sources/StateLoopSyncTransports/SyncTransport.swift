import Foundation
import StateLoopSync

/// How a ``SyncEndpoint`` reaches its server: requests (pulls, mutations, the app's own `GET`s and
/// `POST`s) and push sockets, one attempt at a time.
///
/// The endpoint keeps everything above the wire for itself: the headers every request carries,
/// decoding and size limits, the push sockets' reconnection with its backoff and its hint after a
/// reconnection, connectivity. A transport only carries bytes, so the same app runs over the
/// network (``NetworkTransport``, the default) or against a server in the same process, as a
/// test or a simulation does (StateLoopServerTesting's `InProcessTransport`). Wrapping a
/// transport is how a test adds faults (latency, lost requests and answers, a partition)
/// between an unchanged app and its server.
public protocol SyncTransport: Sendable {
    /// Sends `request` and returns the server's answer, whatever its status. The status and
    /// headers are what the endpoint reads of an answer outside 200–299: its body may be left
    /// out.
    ///
    /// - Parameters:
    ///   - request: The request, with every header it carries.
    ///   - limit: The largest body of a 2xx answer accepted, in bytes.
    /// - Throws: ``ResponseTooLargeError`` for a 2xx answer's body over `limit`, or the
    ///   transport's error when no answer came.
    func send(_ request: TransportRequest, limit: Int) async throws -> TransportResponse

    /// Opens one push socket with `request` (a `ws://` or `wss://` address and the upgrade's
    /// headers), hands each message to `message` until the socket ends, and says how it ended.
    /// Runs until then, or until its task is cancelled, and closes the socket before it returns.
    ///
    /// - Parameters:
    ///   - request: The socket's address and the upgrade's headers.
    ///   - deadline: The longest to wait for the server to answer the upgrade.
    ///   - maximumMessageBytes: The largest message accepted; a larger one ends the socket, as
    ///     `.ended(failed: true)`.
    ///   - opened: Called once the server accepted the socket, before its first message.
    ///   - message: Each message: its text, or why it cannot be read as text.
    func openPush(
        _ request: TransportRequest, deadline: Duration, maximumMessageBytes: Int, opened: @escaping @Sendable () async -> Void,
        message: @escaping @Sendable (Result<String, PushDecodingError>) async -> Void
    ) async -> PushAttempt
}

/// A request as the endpoint hands it to its ``SyncTransport``.
public struct TransportRequest: Sendable, Hashable {
    /// `GET`, `POST`, …
    public var method: String
    /// The address, with its query.
    public var url: URL
    /// The headers, the session's bearer token and the resource's `Client-ID` among them.
    public var headers: [String: String]
    /// The body, if any.
    public var body: Data?

    /// A request for `method url`.
    public init(method: String, url: URL, headers: [String: String] = [:], body: Data? = nil) {
        self.method = method
        self.url = url
        self.headers = headers
        self.body = body
    }
}

/// A server's answer as a ``SyncTransport`` returns it.
public struct TransportResponse: Sendable, Hashable {
    /// The HTTP status.
    public var status: Int
    /// The headers, their names in lower case.
    public var headers: [String: String]
    /// The body.
    public var body: Data

    /// An answer with `status`, `headers` (any case: they are lowered) and `body`.
    public init(status: Int, headers: [String: String] = [:], body: Data = Data()) {
        self.status = status
        self.headers = Dictionary(headers.map { ($0.key.lowercased(), $0.value) }) { _, last in last }
        self.body = body
    }

    /// The body of a 2xx answer.
    ///
    /// - Throws: `HTTPStatusError` for another status, with the wait its `Retry-After` asks for.
    func successBody() throws -> Data {
        guard (200...299).contains(status) else {
            throw HTTPStatusError(status: status, retryAfter: RetryAfter.parse(headers["retry-after"]))
        }
        return body
    }
}

extension SyncTransport {
    /// The body of the answer to `request`, which must be a 2xx one.
    ///
    /// - Throws: `HTTPStatusError` for another status, and what ``send(_:limit:)`` throws.
    func body(of request: TransportRequest, limit: Int) async throws -> Data {
        try await send(request, limit: limit).successBody()
    }
}

/// How one push socket ended, as ``SyncTransport/openPush(_:deadline:maximumMessageBytes:opened:message:)``
/// says it: what decides the wait before the next attempt, and whether the resource is told.
public enum PushAttempt: Sendable, Hashable {
    /// Opened, then ended; `failed` when it ended on a breach of the protocol (a message over the
    /// limit, a malformed frame) rather than a close or a lost connection.
    case ended(failed: Bool)
    /// The server answered the upgrade with another status than 101: its resource pulls to
    /// learn why.
    case refused
    /// The server answered, but not as a WebSocket server does (a 101 with a wrong key, an
    /// answer that is not HTTP).
    case brokenHandshake
    /// No server answered: none there, or the network failed.
    case unreachable
    /// The upgrade was not answered within its deadline.
    case unanswered
}
