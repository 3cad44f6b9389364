import NIOCore

/// The first handler of every connection: it answers and closes a connection whose request
/// head does not come within the time allowed (408), grows past the size allowed (431), does
/// not start with an HTTP/1 request line (400) or has a header line HTTP/1 does not allow (400);
/// one whose request body does not come whole within its time (408); and, when the server
/// starts to stop, one whose first head has not come yet (503), at once. It follows every
/// request of the connection (``RequestFraming``), and leaves the pipeline when a request asks
/// for an upgrade (a push socket's frames are watched by their own handler).
///
/// Why a handler of our own: Hummingbird installs its idle timeout and its parse-error answers
/// only once a first request head has been read without an upgrade, so a client that sends a
/// head slowly, an endless one, garbage, or a valid request line and then a bad header, would
/// otherwise hold its connection open with no answer; and an idle timeout is no bound for a
/// request that trickles a byte now and then, head or body, on any request of a connection.
///
/// Threading: a channel handler, used only on its channel's event loop.
final class RequestHeadGuard: ChannelDuplexHandler, RemovableChannelHandler {
    typealias InboundIn = ByteBuffer
    typealias InboundOut = ByteBuffer
    typealias OutboundIn = ByteBuffer
    typealias OutboundOut = ByteBuffer

    private let timeout: TimeAmount
    private let bodyTimeout: TimeAmount
    private let maximumBytes: Int
    private var framing = RequestFraming()
    /// The part of a request the deadline is for: its phase and which request.
    private var timed: (phase: RequestFraming.Phase, request: Int)?
    private var deadline: Scheduled<Void>?
    private var isDone = false

    /// Set for a connection over its address's share of the connections: refused at once.
    private let overShare: Bool

    init(timeout: TimeAmount, bodyTimeout: TimeAmount = .seconds(30), maximumBytes: Int, overShare: Bool = false) {
        self.timeout = timeout
        self.bodyTimeout = bodyTimeout
        self.maximumBytes = maximumBytes
        self.overShare = overShare
    }

    func handlerAdded(context: ChannelHandlerContext) {
        // The listener is closed first thing in the graceful shutdown, before the quiescing
        // event goes out: a connection set up after that may have had its event before this
        // handler was in place, where nothing heard it.
        if let listener = context.channel.parent, !listener.isActive {
            refuseStopping(context: context)
            return
        }
        if overShare {
            refuse(503, "tooManyConnections", "too many connections from this address", context: context)
            return
        }
        // The first head is timed from the connection's start: a client that connects and
        // sends nothing holds it too.
        arm(.head, context: context)
    }

    func handlerRemoved(context: ChannelHandlerContext) {
        deadline?.cancel()
    }

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        guard !isDone else {
            // Bytes that arrived after a refusal: the connection is closing.
            return
        }
        switch framing.scan(unwrapInboundIn(data).readableBytesView, headLimit: maximumBytes) {
        case .ok:
            context.fireChannelRead(data)
            retime(context: context)
        case .upgrade:
            isDone = true
            deadline?.cancel()
            context.fireChannelRead(data)
            context.pipeline.syncOperations.removeHandler(context: context, promise: nil)
        case .tooLarge:
            refuse(431, "requestHeadTooLarge", "a request line and headers have at most \(maximumBytes) bytes", context: context)
        case .notHTTP:
            refuse(400, "badRequest", "not an HTTP/1 request", context: context)
        case .malformed(let why):
            refuse(400, "badRequest", "malformed request: \(why)", context: context)
        }
    }

    /// Times the part of a request the connection is in: its head from its first byte (the
    /// first request's from the connection's start), its body from the end of its head;
    /// nothing between requests, where Hummingbird's idle timeout watches.
    private func retime(context: ChannelHandlerContext) {
        let now = (phase: framing.phase, request: framing.completed)
        if let timed, timed.phase == now.phase, timed.request == now.request { return }
        arm(now.phase, context: context)
    }

    private func arm(_ phase: RequestFraming.Phase, context: ChannelHandlerContext) {
        deadline?.cancel()
        deadline = nil
        timed = (phase, framing.completed)
        let loop = context.eventLoop.assumeIsolated()
        switch phase {
        case .idle:
            break
        case .head:
            deadline = loop.scheduleTask(in: timeout) { [self] in
                refuse(408, "requestTimeout", "the request head did not arrive in time", context: context)
            }
        case .body:
            deadline = loop.scheduleTask(in: bodyTimeout) { [self] in
                refuse(408, "requestTimeout", "the request body did not arrive in time", context: context)
            }
        }
    }

    /// The server is stopping (Hummingbird's graceful shutdown): a connection with no request
    /// head yet has nothing under way, so it is answered and closed now. Left alone, it would
    /// hold the shutdown until the head's deadline, and a client that reconnects as the server
    /// stops (a push socket does, at once) opens exactly such connections. (One set up after
    /// this event was sent is refused by `handlerAdded`, which finds the listener closed.) A
    /// connection that served requests is Hummingbird's to close.
    func userInboundEventTriggered(context: ChannelHandlerContext, event: Any) {
        if event is ChannelShouldQuiesceEvent, framing.completed == 0, framing.phase != .body {
            refuseStopping(context: context)
        }
        context.fireUserInboundEventTriggered(event)
    }

    private func refuseStopping(context: ChannelHandlerContext) {
        refuse(503, "shuttingDown", "the server is stopping", context: context)
    }

    private func refuse(_ status: Int, _ code: String, _ message: String, context: ChannelHandlerContext) {
        guard !isDone else { return }
        isDone = true
        deadline?.cancel()
        let reason =
            [400: "Bad Request", 408: "Request Timeout", 431: "Request Header Fields Too Large", 503: "Service Unavailable"][status] ?? "Error"
        let body = String(decoding: WireMessage.error(code, message), as: UTF8.self)
        let response =
            "HTTP/1.1 \(status) \(reason)\r\nContent-Type: application/json\r\nContent-Length: \(body.utf8.count)\r\nConnection: close\r\n\r\n\(body)"
        // Closed once the answer is written: a close with the write still queued would drop it
        // (a connection refused as it is set up, before it is active, says nothing otherwise).
        context.writeAndFlush(wrapOutboundOut(context.channel.allocator.buffer(string: response)))
            .assumeIsolated()
            .whenComplete { _ in context.close(promise: nil) }
    }
}
