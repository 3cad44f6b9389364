import NIOCore

/// The first handler of every connection, until its first request head is complete: it
/// answers and closes a connection whose head does not come within the time allowed (408),
/// grows past the size allowed (431), or does not start with an HTTP/1 request line (400); and,
/// when the server starts to stop, one whose head has not come yet (503), at once.
///
/// Why a handler of our own: Hummingbird installs its idle timeout and its parse-error answers
/// only once a first request head has been read without an upgrade, so a client that sends a
/// head slowly, an endless one, or garbage, would otherwise hold its connection open with no
/// answer. Later requests on the connection are covered by Hummingbird's own handlers.
///
/// Threading: a channel handler, used only on its channel's event loop.
final class RequestHeadGuard: ChannelDuplexHandler, RemovableChannelHandler {
    typealias InboundIn = ByteBuffer
    typealias InboundOut = ByteBuffer
    typealias OutboundIn = ByteBuffer
    typealias OutboundOut = ByteBuffer

    private let timeout: TimeAmount
    private let maximumBytes: Int
    private let stopping: OnceFlag
    private var scanner = RequestHeadScanner()
    private var deadline: Scheduled<Void>?
    private var isDone = false

    init(timeout: TimeAmount, maximumBytes: Int, stopping: OnceFlag) {
        self.timeout = timeout
        self.maximumBytes = maximumBytes
        self.stopping = stopping
    }

    func handlerAdded(context: ChannelHandlerContext) {
        if stopping.isRaised {
            refuseStopping(context: context)
            return
        }
        deadline = context.eventLoop.assumeIsolated().scheduleTask(in: timeout) { [self] in
            refuse(408, "requestTimeout", "the request head did not arrive in time", context: context)
        }
    }

    func handlerRemoved(context: ChannelHandlerContext) {
        deadline?.cancel()
    }

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        guard !isDone else {
            // Bytes that arrived after a refusal: the connection is closing.
            return
        }
        switch scanner.scan(unwrapInboundIn(data).readableBytesView, limit: maximumBytes) {
        case .incomplete:
            context.fireChannelRead(data)
        case .complete:
            isDone = true
            deadline?.cancel()
            context.fireChannelRead(data)
            context.pipeline.syncOperations.removeHandler(context: context, promise: nil)
        case .tooLarge:
            refuse(431, "requestHeadTooLarge", "a request line and headers have at most \(maximumBytes) bytes", context: context)
        case .notHTTP:
            refuse(400, "badRequest", "not an HTTP/1 request", context: context)
        }
    }

    /// The server is stopping (Hummingbird's graceful shutdown): a connection with no request
    /// head yet has nothing under way, so it is answered and closed now. Left alone, it would
    /// hold the shutdown until the head's deadline, and a client that reconnects as the server
    /// stops (a push socket does, at once) opens exactly such connections. (One accepted after
    /// this event was sent is refused by `handlerAdded`, through the `stopping` flag.)
    func userInboundEventTriggered(context: ChannelHandlerContext, event: Any) {
        if event is ChannelShouldQuiesceEvent {
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
        let reason = [400: "Bad Request", 408: "Request Timeout", 431: "Request Header Fields Too Large", 503: "Service Unavailable"][status] ?? "Error"
        let body = String(decoding: WireMessage.error(code, message), as: UTF8.self)
        let response = "HTTP/1.1 \(status) \(reason)\r\nContent-Type: application/json\r\nContent-Length: \(body.utf8.count)\r\nConnection: close\r\n\r\n\(body)"
        context.writeAndFlush(wrapOutboundOut(context.channel.allocator.buffer(string: response)), promise: nil)
        context.close(promise: nil)
    }
}

/// Reads a request head as it arrives: whether its first line is an HTTP/1 request line, and
/// whether the blank line that ends the head has come.
struct RequestHeadScanner {
    enum Verdict: Equatable {
        case incomplete, complete, tooLarge, notHTTP
    }

    private var count = 0
    private var firstLine: [UInt8] = []
    private var firstLineDone = false
    /// The last bytes seen, to find "\r\n\r\n" across reads.
    private var last: UInt32 = 0

    mutating func scan(_ bytes: ByteBufferView, limit: Int) -> Verdict {
        for byte in bytes {
            count += 1
            last = last << 8 | UInt32(byte)
            if !firstLineDone {
                if byte == UInt8(ascii: "\n") {
                    firstLineDone = true
                    guard Self.isRequestLine(firstLine) else { return .notHTTP }
                } else {
                    firstLine.append(byte)
                }
            }
            if firstLineDone, last == 0x0D0A_0D0A { return .complete }
            if count > limit { return .tooLarge }
        }
        return .incomplete
    }

    /// `METHOD target HTTP/1.x`, with a method of capital letters.
    static func isRequestLine(_ line: [UInt8]) -> Bool {
        let trimmed = line.last == UInt8(ascii: "\r") ? line.dropLast() : line[...]
        let parts = trimmed.split(separator: UInt8(ascii: " "), omittingEmptySubsequences: false)
        guard parts.count == 3, (1...20).contains(parts[0].count),
              parts[0].allSatisfy({ (UInt8(ascii: "A")...UInt8(ascii: "Z")).contains($0) }),
              !parts[1].isEmpty
        else { return false }
        return parts[2].elementsEqual("HTTP/1.1".utf8) || parts[2].elementsEqual("HTTP/1.0".utf8)
    }
}
