import Foundation
import HTTPTypes
import Hummingbird
import NIOCore
import StateLoopWire

/// An error answered the way the kit answers its own: a status, and an `ErrorBody` as JSON
/// (`{"error": "<code>", "message": "…"}`, keys sorted).
///
/// Throw it from an app's route (Hummingbird answers any `HTTPResponseError` with its response),
/// or answer it with ``HummingbirdCore/Response/error(_:_:_:headers:)``. ``SyncRequestDecoder`` throws it for a
/// body that is too large (413 `bodyTooLarge`) or not the JSON expected (400 `badRequest`).
///
/// ```swift
/// guard login.password.utf8.count <= 72 else {
///     throw ErrorResponse(.badRequest, "invalidPassword", "a password has at most 72 bytes")
/// }
/// ```
///
/// Unlike a ``MutationRefusal``, which is remembered and so must be final for the client, any
/// status goes: an app's own routes are not replayed.
public struct ErrorResponse: HTTPResponseError, Sendable, Hashable {
    /// The answer's status.
    public var status: HTTPResponse.Status
    /// The answer's body: a stable code and a message for people.
    public var body: ErrorBody
    /// Headers added to the answer (`Retry-After`, say).
    public var headers: HTTPFields

    /// An error answered with `status` and the body `{"error": error, "message": message}`,
    /// plus `headers`.
    public init(_ status: HTTPResponse.Status, _ error: String, _ message: String, headers: HTTPFields = [:]) {
        self.status = status
        self.body = ErrorBody(error: error, message: message)
        self.headers = headers
    }

    /// The answer, whatever the request and context.
    public func response(from request: Request, context: some RequestContext) -> Response {
        answer
    }

    /// The answer.
    var answer: Response {
        KitJSON.response(status, WireMessage.error(body.error, body.message), headers: headers)
    }

    /// A body beyond `limit` bytes: 413.
    static func bodyTooLarge(limit: Int) -> ErrorResponse {
        ErrorResponse(.contentTooLarge, "bodyTooLarge", "a request body has at most \(limit) bytes")
    }

    /// No valid session: 401 `unauthorized`, as the kit's own routes answer (a client signs in
    /// again).
    public static var unauthorized: ErrorResponse {
        ErrorResponse(.unauthorized, "unauthorized", "no valid session: sign in again")
    }

    /// The store cannot be reached now: 503 `unavailable` with `Retry-After: 1`, as the kit's own
    /// routes answer (a client retries).
    public static var unavailable: ErrorResponse {
        ErrorResponse(.serviceUnavailable, "unavailable", "the server cannot reach its data now: retry", headers: [.retryAfter: "1"])
    }

    /// Held back for `wait` (a ``SignInLimits`` or ``AttemptLimiter`` wait): 429
    /// `tooManyAttempts`, the reason and the wait in whole seconds rounded up, in the message and
    /// in `Retry-After`.
    public static func tooManyAttempts(retryAfter wait: Duration, _ reason: String) -> ErrorResponse {
        let seconds = wait.components.seconds + (wait.components.attoseconds > 0 ? 1 : 0)
        return ErrorResponse(
            .tooManyRequests, "tooManyAttempts", "\(reason): try again in \(max(1, seconds)) s", headers: [.retryAfter: "\(max(1, seconds))"]
        )
    }
}

extension Response {
    /// `value` as JSON, the way the kit answers: keys sorted, `Content-Type: application/json`.
    ///
    /// ```swift
    /// router.get("places") { request, context in
    ///     try Response.json(catalog.search(request.uri.queryParameters.get("q") ?? ""))
    /// }
    /// ```
    ///
    /// - Throws: the encoder's error (a value that cannot be encoded, such as a non-finite
    ///   `Double`).
    public static func json(_ value: some Encodable, status: HTTPResponse.Status = .ok, headers: HTTPFields = [:]) throws -> Response {
        KitJSON.response(status, try KitJSON.encoder.encode(value), headers: headers)
    }

    /// An error answer as the kit gives its own: `status`, and `{"error": error, "message":
    /// message}` as JSON with sorted keys (an ``ErrorResponse``'s answer).
    public static func error(_ status: HTTPResponse.Status, _ error: String, _ message: String, headers: HTTPFields = [:]) -> Response {
        ErrorResponse(status, error, message, headers: headers).answer
    }
}

/// Decodes request bodies as JSON within a byte limit, failing with the kit's errors: the
/// decoder of ``SyncRequestContext``, so that in an app's route
///
/// ```swift
/// router.post("login") { request, context in
///     let login = try await request.decode(as: Login.self, context: context)
///     …
/// }
/// ```
///
/// reads at most the server's ``SyncServerConfiguration/maximumBodyBytes`` and answers a body
/// beyond it 413 (`bodyTooLarge`), and one that is not JSON, or not the JSON of the type, 400
/// (`badRequest`, saying what is wrong where), each with an `ErrorBody`, as the kit's own
/// mutation routes answer theirs. The request's `Content-Type` is not checked, as the kit's
/// routes do not check it.
public struct SyncRequestDecoder: RequestDecoder, Sendable {
    /// The largest body read, in bytes.
    public var maximumBodyBytes: Int

    /// A decoder reading at most `maximumBodyBytes` of a body.
    public init(maximumBodyBytes: Int = SyncServerConfiguration().maximumBodyBytes) {
        self.maximumBodyBytes = maximumBodyBytes
    }

    /// The request's body decoded as `type`.
    ///
    /// - Throws: ``ErrorResponse``: 413 `bodyTooLarge`, 400 `badRequest`.
    public func decode<T: Decodable>(_ type: T.Type, from request: Request, context: some RequestContext) async throws -> T {
        try Self.decode(type, from: try await Self.collect(request.body, upTo: maximumBodyBytes))
    }

    /// The whole body, at most `limit` bytes.
    ///
    /// - Throws: ``ErrorResponse``: 413 `bodyTooLarge` beyond `limit`, 400 `badRequest` for a
    ///   body that could not be read.
    static func collect(_ body: RequestBody, upTo limit: Int) async throws(ErrorResponse) -> ByteBuffer {
        do {
            return try await body.collect(upTo: limit)
        } catch is NIOTooManyBytesError {
            throw ErrorResponse.bodyTooLarge(limit: limit)
        } catch {
            throw ErrorResponse(.badRequest, "badRequest", "the body could not be read")
        }
    }

    /// `body` decoded as `type`.
    ///
    /// - Throws: ``ErrorResponse`` 400 `badRequest`, saying what is wrong where.
    static func decode<T: Decodable>(_ type: T.Type, from body: ByteBuffer) throws(ErrorResponse) -> T {
        do {
            return try KitJSON.decoder.decode(T.self, from: Data(body.readableBytesView))
        } catch let error as DecodingError {
            throw ErrorResponse(.badRequest, "badRequest", describe(error))
        } catch {
            throw ErrorResponse(.badRequest, "badRequest", "the body is not valid JSON")
        }
    }

    /// What a decoding error says, where: a client's developer reads it.
    private static func describe(_ error: DecodingError) -> String {
        func path(_ context: DecodingError.Context) -> String {
            let path = context.codingPath.map { $0.intValue.map { "[\($0)]" } ?? $0.stringValue }.joined(separator: ".")
            return path.isEmpty ? "the body" : "'\(path)'"
        }
        switch error {
        case .keyNotFound(let key, let context): return "\(path(context)) is missing '\(key.stringValue)'"
        case .typeMismatch(let type, let context): return "\(path(context)) is not a \(type)"
        case .valueNotFound(let type, let context): return "\(path(context)) is null, expected a \(type)"
        case .dataCorrupted(let context): return "\(path(context)) is not valid: \(context.debugDescription)"
        @unknown default: return "the body is not valid"
        }
    }
}

/// Encodes the values an app's routes return as the kit answers: the encoder of
/// ``SyncRequestContext``, so that a route may return any `ResponseEncodable` value (declare
/// the conformance: `extension LoginAnswer: ResponseEncodable {}`) and have it answered as
/// JSON with sorted keys and `Content-Type: application/json`, status 200. For another
/// status, return ``HummingbirdCore/Response/json(_:status:headers:)``.
public struct SyncResponseEncoder: ResponseEncoder, Sendable {
    /// The encoder.
    public init() {}

    /// `value` as a 200 JSON response.
    public func encode(_ value: some Encodable, from request: Request, context: some RequestContext) throws -> Response {
        try Response.json(value)
    }
}

/// Sets the body limit of every request's context to the server's, before any other middleware
/// or route sees the request.
struct BodyLimitMiddleware: RouterMiddleware {
    typealias Context = SyncRequestContext
    let maximumBodyBytes: Int

    func handle(_ request: Request, context: Context, next: (Request, Context) async throws -> Response) async throws -> Response {
        var context = context
        context.maximumBodyBytes = maximumBodyBytes
        return try await next(request, context)
    }
}
