import HTTPTypes
import Hummingbird
import Logging
import NIOCore
import NIOEmbedded
import StateLoopServer

/// A server kit's routes answered in the simulation's process: each request goes to the
/// router's responder as Hummingbird hands one over from a connection, with no socket, event
/// loop or thread of its own, so the kit's request logic (access, mutation ids, remembered
/// answers, the store's transactions) runs on the simulation's thread, from its seed.
struct InProcessHTTP: Sendable {
    let responder: RouterResponder<SyncRequestContext>
    let logger: Logger

    /// Sends one request; the answer's status and body.
    func send(_ method: HTTPRequest.Method, _ path: String, headers: HTTPFields = [:], body: ByteBuffer? = nil) async throws -> (
        status: Int, body: ByteBuffer
    ) {
        let head = HTTPRequest(method: method, scheme: "http", authority: "127.0.0.1", path: path, headerFields: headers)
        let request = Request(head: head, body: RequestBody(buffer: body ?? ByteBuffer()))
        // An embedded channel: the context asks its channel for the peer's address only.
        let context = SyncRequestContext(source: ApplicationRequestContextSource(channel: EmbeddedChannel(), logger: logger))
        let response = try await responder.respond(to: request, context: context)
        let collected = Collected()
        try await response.body.write(Collector(into: collected))
        return (Int(response.status.code), collected.buffer)
    }
}

/// Where a ``Collector`` puts the body's bytes.
private final class Collected: @unchecked Sendable {
    // Written by one request's body on the simulation's thread, read after it.
    var buffer = ByteBuffer()
}

/// A response body writer that keeps what it is given.
private struct Collector: ResponseBodyWriter {
    let into: Collected

    mutating func write(_ buffer: ByteBuffer) async throws {
        var buffer = buffer
        into.buffer.writeBuffer(&buffer)
    }

    consuming func finish(_ trailingHeaders: HTTPFields?) async throws {}
}
