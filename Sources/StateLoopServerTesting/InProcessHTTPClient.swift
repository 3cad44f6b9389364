import Foundation
import HTTPTypes
import Hummingbird
import Logging
import NIOCore
import NIOEmbedded
import StateLoopServer
import StateLoopSyncTransports

/// Requests answered by a router in the calling process: each one is handed to the router's
/// responder as Hummingbird hands over a request from a connection, with no socket, event loop
/// or thread of its own. The routes' code (the kit's access checks, mutation ids, remembered
/// answers, the app's handlers) runs in the caller's task, so a test needs no port, and a
/// simulation (StateLoopSimulation) runs a server from its seed: give the server a store that
/// does the same, such as `SQLiteStore(blocking: true)`.
///
/// ```swift
/// let server = SyncServer(store: try SQLiteStore(blocking: true), access: Rules())
/// server.serve(notes, at: "notes/:id") { user, parameters in parameters.get("id") }
/// let router = Router(context: SyncRequestContext.self)
/// server.addRoutes(to: router)
/// let client = InProcessHTTPClient(router: router, headers: ["Authorization": "Bearer ann"])
/// let answer = try await client.send("GET", "/notes/ann")
/// ```
///
/// What it leaves out: push sockets (``InProcessTransport`` opens those too, for an app's
/// `SyncEndpoint`), and the HTTP server's own limits and middleware added to the application
/// rather than to the router.
public struct InProcessHTTPClient: Sendable {
    private let responder: RouterResponder<SyncRequestContext>
    private let logger: Logger
    /// Headers sent with every request (a request's own headers win).
    public var headers: [String: String]

    /// A client of the routes `router` holds now (routes added later are not seen).
    public init(router: Router<SyncRequestContext>, headers: [String: String] = [:], logger: Logger = Logger(label: "stateloop.in-process")) {
        responder = router.buildResponder()
        self.headers = headers
        self.logger = logger
    }

    /// `method path` with `body` and `headers` beside the client's own: the answer's status and
    /// body, whatever the status.
    ///
    /// - Throws: what the router throws that is not an HTTP error (those are answered with
    ///   their status, as the server answers them).
    public func send(_ method: String, _ path: String, headers: [String: String] = [:], body: Data? = nil) async throws -> TestHTTPResponse {
        let fields = HTTPFields(self.headers.merging(headers, uniquingKeysWith: { _, request in request }))
        let path = path.hasPrefix("/") ? path : "/" + path
        let head = HTTPRequest(method: HTTPRequest.Method(method) ?? .get, scheme: "http", authority: "127.0.0.1", path: path, headerFields: fields)
        let request = Request(head: head, body: RequestBody(buffer: body.map { ByteBuffer(data: $0) } ?? ByteBuffer()))
        // An embedded channel: the kit's context asks its channel for the peer's address only.
        let context = SyncRequestContext(source: ApplicationRequestContextSource(channel: EmbeddedChannel(), logger: logger))
        let response: Response
        do {
            response = try await responder.respond(to: request, context: context)
        } catch let error as any HTTPResponseError {
            response = try error.response(from: request, context: context)
        }
        let collected = CollectedBody()
        try await response.body.write(BodyCollector(into: collected))
        var answered: [String: String] = [:]
        for field in response.headers { answered[field.name.canonicalName] = field.value }
        return TestHTTPResponse(status: Int(response.status.code), body: Data(buffer: collected.buffer), headers: answered)
    }

    /// `method path` with `value` as its JSON body, and a `Mutation-ID` and a `Client-ID` when
    /// given.
    public func send(
        _ method: String, _ path: String, json value: some Encodable, mutationID: String? = nil, clientID: String? = nil,
        headers: [String: String] = [:]
    ) async throws -> TestHTTPResponse {
        let (headers, body) = try TestHTTPClient.jsonRequest(value, mutationID: mutationID, clientID: clientID, headers: headers)
        return try await send(method, path, headers: headers, body: body)
    }
}

/// Where a ``BodyCollector`` puts a response's bytes: written by the one task that answers the
/// request, read by it once the body is written.
private final class CollectedBody: @unchecked Sendable {
    var buffer = ByteBuffer()
}

/// A response body writer that keeps what it is given.
private struct BodyCollector: ResponseBodyWriter {
    let into: CollectedBody

    mutating func write(_ buffer: ByteBuffer) async throws {
        var buffer = buffer
        into.buffer.writeBuffer(&buffer)
    }

    consuming func finish(_ trailingHeaders: HTTPFields?) async throws {}
}
