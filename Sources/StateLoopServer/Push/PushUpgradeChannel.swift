import HTTPTypes
import HummingbirdCore
import Logging
import NIOCore
import NIOHTTP1
import NIOHTTPTypes
import NIOHTTPTypesHTTP1
import NIOWebSocket

/// The server's connections: HTTP/1 for the kit's routes and the app's, and push sockets
/// upgraded to WebSocket that live in their channel's pipeline alone, with no task.
///
/// Hummingbird's WebSocket channel runs each socket's handler in the connection's task for the
/// socket's life, about a dozen generic async frames deep: some 18 KB a socket in Swift's task
/// allocator, more than everything else a socket holds. A push socket needs none of it: the
/// server only writes pushes and answers pings and the close handshake, all of which a channel
/// handler does on its event loop (``PushSocketHandler``). So the connection's task ends as
/// soon as the upgrade is done, and the socket costs its channel and a few small objects.
///
/// An upgrade is decided by `decide` (the kit's push routes), in a task that ends with the
/// decision. A refused upgrade is answered with the refusal's own status (401, 404, 429, 503)
/// and a JSON error body, and closed.
struct PushUpgradeChannel: ServerChildChannel, HTTPChannelHandler {
    /// What an upgrade's decision found.
    enum Decision: Sendable {
        /// Upgrade; `install` adds the socket's handler to the upgraded pipeline, on its event loop.
        case upgrade(install: @Sendable (any Channel) throws -> Void)
        /// Refuse, answering `status` with `body` (and `Retry-After` when it is set).
        case refuse(HTTPResponse.Status, body: ByteBuffer, retryAfter: Int?)
    }

    /// How a connection's negotiation ended.
    enum Outcome: Sendable {
        /// A push socket: it lives in the channel's pipeline, nothing more to run.
        case pushSocket
        /// HTTP/1, with the refusal of an upgrade that was asked for and refused, if any.
        case http(NIOAsyncChannel<HTTPRequestPart, HTTPResponsePart>, refused: Decision?)
    }

    struct Value: ServerChildChannelValue {
        let outcome: EventLoopFuture<Outcome>
        let channel: any Channel
    }

    let responder: HTTPChannelHandler.Responder
    let http1: HTTP1Channel.Configuration
    let maximumFrameBytes: Int
    let decide: @Sendable (HTTPRequest, any Channel, Logger) async -> Decision

    func setup(channel: any Channel, logger: Logger) -> EventLoopFuture<Value> {
        channel.eventLoop.makeCompletedFuture {
            // The decision, from the upgrade's check to the pipeline's change or the refusal.
            let decision = UpgradeHandOver()
            let upgrader = NIOTypedWebSocketServerUpgrader<Outcome>(
                maxFrameSize: maximumFrameBytes,
                shouldUpgrade: { channel, head in
                    let promise = channel.eventLoop.makePromise(of: HTTPHeaders?.self)
                    promise.completeWithTask {
                        let found: Decision
                        do {
                            found = await decide(try HTTPRequest(head, secure: false, splitCookie: false), channel, logger)
                        } catch {
                            found = .refuse(.badRequest, body: ByteBuffer(data: WireMessage.error("badRequest", "\(error)")), retryAfter: nil)
                        }
                        decision.keep(found)
                        if case .upgrade = found { return HTTPHeaders() }
                        return nil
                    }
                    return promise.futureResult
                },
                upgradePipelineHandler: { channel, _ in
                    channel.eventLoop.makeCompletedFuture {
                        guard case .upgrade(let install) = decision.take(as: Decision.self) else {
                            throw ChannelError.inappropriateOperationForState
                        }
                        try install(channel)
                        return .pushSocket
                    }
                }
            )
            let http1 = http1
            let checked = RefusingBadUpgrades(base: upgrader, decision: decision)
            let upgrade = NIOTypedHTTPServerUpgradeConfiguration<Outcome>(upgraders: [checked]) { channel in
                channel.eventLoop.makeCompletedFuture {
                    let operations = channel.pipeline.syncOperations
                    try operations.addHandler(HTTP10ConnectionClose())
                    try operations.addHandler(HTTP1ToHTTPServerCodec(secure: false))
                    try operations.addHandlers(http1.additionalChannelHandlers())
                    try operations.addHandler(HTTPConnectionStateHandler(idleTimeout: http1.idleTimeout.map { .init($0) }, logger: logger))
                    let http = try NIOAsyncChannel<HTTPRequestPart, HTTPResponsePart>(
                        wrappingChannelSynchronously: channel, configuration: .init(isOutboundHalfClosureEnabled: true)
                    )
                    return .http(http, refused: decision.take(as: Decision.self))
                }
            }
            var configuration = NIOUpgradableHTTPServerPipelineConfiguration(upgradeConfiguration: upgrade)
            // As Hummingbird's own HTTP/1 channel: pipelining is NIOAsyncChannel's, errors and
            // header validation Hummingbird's.
            configuration.enablePipelining = false
            configuration.enableErrorHandling = false
            configuration.enableResponseHeaderValidation = false
            configuration.decoderConfiguration.maxHeaderFieldSize = http1.httpDecoder.maxHeaderFieldSize
            configuration.decoderConfiguration.maxHeaderListSize = http1.httpDecoder.maxHeaderListSize
            configuration.decoderConfiguration.maxHeaderFieldCount = http1.httpDecoder.maxHeaderFieldCount
            let outcome = try channel.pipeline.syncOperations.configureUpgradableHTTPServerPipeline(configuration: configuration)
            return Value(outcome: outcome, channel: channel)
        }
    }

    func handle(value: Value, logger: Logger) async {
        do {
            switch try await value.outcome.get() {
            case .pushSocket:
                // The socket lives on in its pipeline; this task, and its memory, end here.
                return
            case .http(let http, refused: .refuse(let status, let body, let retryAfter)):
                await refuse(http, status: status, body: body, retryAfter: retryAfter, logger: logger)
            case .http(let http, refused: _):
                await handleHTTP(asyncChannel: http, logger: logger)
            }
        } catch {
            // Nothing will serve this connection (an upgrade that failed half way, say): close it.
            logger.debug("connection ended before its request was handled", metadata: ["error": "\(error)"])
            try? await value.channel.close()
        }
    }

    /// Answers a refused upgrade and closes the connection.
    private func refuse(
        _ http: NIOAsyncChannel<HTTPRequestPart, HTTPResponsePart>, status: HTTPResponse.Status, body: ByteBuffer, retryAfter: Int?,
        logger: Logger
    ) async {
        var headers: HTTPFields = [.connection: "close", .contentType: "application/json", .contentLength: "\(body.readableBytes)"]
        if let retryAfter { headers[.retryAfter] = "\(retryAfter)" }
        do {
            try await http.executeThenClose { _, outbound in
                try await outbound.write(contentsOf: [.head(HTTPResponse(status: status, headerFields: headers)), .body(body), .end(nil)])
            }
        } catch {
            logger.trace("could not answer a refused upgrade", metadata: ["error": "\(error)"])
        }
    }
}

/// NIO's WebSocket upgrader, with a refusal kept before it looks at the request: an upgrade
/// whose WebSocket headers are wrong (no key, a version other than 13) never reaches the
/// decision, and without an answer of its own fell through to HTTP, where nothing answered it and
/// the connection stayed open. It is answered 400 and closed instead; a request the decision
/// sees replaces the refusal with its own.
private struct RefusingBadUpgrades: NIOTypedHTTPServerProtocolUpgrader {
    let base: NIOTypedWebSocketServerUpgrader<PushUpgradeChannel.Outcome>
    let decision: UpgradeHandOver

    var supportedProtocol: String { base.supportedProtocol }
    var requiredUpgradeHeaders: [String] { base.requiredUpgradeHeaders }

    func buildUpgradeResponse(
        channel: any Channel, upgradeRequest: HTTPRequestHead, initialResponseHeaders: HTTPHeaders
    ) -> EventLoopFuture<HTTPHeaders> {
        let body = WireMessage.error("badUpgrade", "a push socket needs a WebSocket upgrade: Sec-WebSocket-Version 13 and a Sec-WebSocket-Key")
        decision.keep(PushUpgradeChannel.Decision.refuse(.badRequest, body: ByteBuffer(data: body), retryAfter: nil))
        return base.buildUpgradeResponse(channel: channel, upgradeRequest: upgradeRequest, initialResponseHeaders: initialResponseHeaders)
    }

    func upgrade(channel: any Channel, upgradeRequest: HTTPRequestHead) -> EventLoopFuture<PushUpgradeChannel.Outcome> {
        base.upgrade(channel: channel, upgradeRequest: upgradeRequest)
    }
}
