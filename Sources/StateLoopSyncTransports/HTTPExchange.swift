import AsyncHTTPClient
import Foundation
import NIOCore
import NIOHTTP1
import NIOPosix
import StateLoopSync

/// A response body larger than the client accepts (``HTTPPull`` and ``HTTPMutationSender``
/// take a `maximumResponseBytes`), so that a server sending megabytes (by mistake, or to
/// exhaust the client's memory) is refused rather than decoded and kept: a body announced
/// larger in `Content-Length` is not read at all, one that comes without a length is cut as
/// soon as it passes the limit, so an endless body costs the client the limit and no more.
///
/// `FailureKind.classify(_:)` counts it as transient, like any error that is not an HTTP
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

/// What ``NetworkTransport`` and the test kit's HTTP client share: the process's AsyncHTTPClient,
/// requests built for it, bodies read up to a limit, a retry of a request never sent.
///
/// Built on AsyncHTTPClient rather than URLSession: on Linux, FoundationNetworking's URLSession
/// deadlocks when a waiting call is cancelled (swift-corelibs-foundation issue 5412), crashes
/// when a task is cancelled as its transfer completes, and has a family of use-after-free
/// crashes in its libcurl glue around refused and closed connections (issues 4791, 5469), which
/// a client meets every time its server restarts. Every StateLoop request can be cancelled (a
/// changed request stops the old one; a timeout cancels), so cancellation must be safe:
/// AsyncHTTPClient's is (the request is failed and its connection closed, on the event loop).
package enum HTTPExchange {
    /// The client the transports use when the app gives none: one for the process, never shut
    /// down (as `URLSession.shared` is not).
    ///
    /// Two settings differ from AsyncHTTPClient's defaults, for a sync client: a connection
    /// that cannot be made fails its requests at once (the resource's retry policy decides
    /// when to try again, and reports "offline" meanwhile) rather than being retried inside the
    /// client until the connect timeout; and a process may hold many sessions to one server
    /// (tests and the chaos run hold dozens), so the pool keeps up to 64 connections per host.
    package static let sharedClient: HTTPClient = {
        var configuration = HTTPClient.Configuration()
        configuration.connectionPool.retryConnectionEstablishment = false
        configuration.connectionPool.concurrentHTTP1ConnectionsPerHostSoftLimit = 64
        configuration.timeout = .init(connect: .seconds(10), read: .seconds(60))
        return HTTPClient(eventLoopGroup: HTTPClient.defaultEventLoopGroup, configuration: configuration)
    }()

    /// The longest a request may take, start to end, when its caller sets no shorter bound
    /// (``ResourcePolicy/requestTimeout`` cancels much earlier).
    static let deadline: TimeAmount = .seconds(120)

    /// A request for `url`, with `headers`, and `body` if any.
    package static func request(
        _ method: HTTPMethod, _ url: URL, headers: [String: String] = [:], body: Data? = nil
    ) -> HTTPClientRequest {
        var request = HTTPClientRequest(url: url.absoluteString)
        request.method = method
        for (name, value) in headers {
            request.headers.replaceOrAdd(name: name, value: value)
        }
        if let body {
            request.body = .bytes(ByteBuffer(bytes: body))
        }
        return request
    }

    /// `response`'s body, read as it arrives up to `limit` bytes.
    ///
    /// - Throws: `NIOTooManyBytesError` past the limit.
    static func collect(_ response: HTTPClientResponse, upTo limit: Int) async throws -> Data {
        Data(try await response.body.collect(upTo: limit).readableBytesView)
    }

    /// `method url` with `headers` and `body`: the status and the body of the answer, whatever
    /// the status (for tests and tools that check refusals).
    package static func send(
        _ method: String, _ url: URL, headers: [String: String] = [:], body: Data? = nil, limit: Int = 4 << 20
    ) async throws -> (status: Int, body: Data) {
        let request = request(HTTPMethod(rawValue: method), url, headers: headers, body: body)
        let response = try await retryingUnsent { try await sharedClient.execute(request, timeout: deadline) }
        return (Int(response.status.code), try await collect(response, upTo: limit))
    }

    /// `send()`, made once more when it failed before a byte of the request was written: a pooled
    /// connection that the server closed (it restarted, or timed the connection out) and whose
    /// close the client had not seen yet fails the write with "I/O on closed channel". Nothing
    /// reached the server, so sending again on a new connection is safe for any method, POST
    /// included; a second such failure is thrown.
    static func retryingUnsent<Answer>(_ send: () async throws -> Answer) async throws -> Answer {
        do {
            return try await send()
        } catch ChannelError.ioOnClosedChannel {
            try Task.checkCancellation()
            return try await send()
        }
    }

    /// A short message for a transport error, for a user: "connection refused" rather than the
    /// dump of a NIO error's fields.
    package static func message(for error: any Error) -> String {
        if let status = error as? HTTPStatusError { return status.description }
        if let io = error as? IOError { return String(cString: strerror(io.errnoCode)).lowercased() }
        if let connection = error as? NIOConnectionError, let first = connection.connectionErrors.first {
            return message(for: first.error)
        }
        if let client = error as? HTTPClientError {
            switch client {
            case .connectTimeout: return "timed out connecting"
            case .readTimeout, .deadlineExceeded: return "timed out"
            case .remoteConnectionClosed: return "the server closed the connection"
            case .cancelled: return "cancelled"
            default: return "\(client)"
            }
        }
        return "\(error)"
    }
}
