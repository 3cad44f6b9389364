import Logging
import NIOCore
import NIOWebSocket

/// The end of one push socket's pipeline, after NIO's WebSocket frame codec and protocol-error
/// handler: answers the client's pings and its close, resumes the writer when the channel can
/// take more, cuts off a reader that stops reading, and ends the socket when the connection
/// goes.
///
/// Frames from the client other than pings and close are read and ignored (a push socket only
/// sends); one over the frame limit is answered by NIO's error handler with close 1009. A frame
/// that breaks RFC 6455 in ways NIO's decoder lets through (not masked, a reserved bit set, a
/// reserved opcode) closes the socket with 1002, and a client sending more frames than
/// ``PushWriting/clientFramesPerSecond`` allows with 1008.
///
/// A pong counts like a push: it is written only while the channel is writable, and
/// meanwhile only the newest ping's answer waits (RFC 6455 allows answering the most recent
/// ping alone), so a client that pings and never reads holds no more than the bytes in flight
/// and is cut as a slow reader.
/// Threading: NIO calls it on the channel's event loop only.
final class PushSocketHandler: ChannelInboundHandler, RemovableChannelHandler {
    typealias InboundIn = WebSocketFrame
    typealias OutboundOut = WebSocketFrame

    private let writer: PushSocketWriter
    private let shared: PushWriting
    private let key: ResourceKey
    private let ended: @Sendable () -> Void
    /// Closes the connection of a reader that has not made room within the slow-reader timeout.
    private var slowReaderCut: Scheduled<Void>?
    /// The answer to the newest ping, waiting for the channel to be writable again.
    private var waitingPong: ByteBuffer?
    /// The frames the client may send now: refilled at the allowed rate, up to twice it.
    private var frameAllowance: Double
    private var allowanceRefilled = NIODeadline.now()
    /// The socket is being closed for a broken rule: what the client sends is ignored.
    private var isEnding = false

    /// A handler for `writer`'s socket, following `key`; `ended` runs once, when the connection
    /// closes.
    init(writer: PushSocketWriter, shared: PushWriting, key: ResourceKey, ended: @escaping @Sendable () -> Void) {
        self.writer = writer
        self.shared = shared
        self.key = key
        self.ended = ended
        frameAllowance = Double(Self.burst(shared.clientFramesPerSecond))
    }

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        guard !isEnding else { return }
        let frame = unwrapInboundIn(data)
        guard Self.followsProtocol(frame) else {
            shared.logger.debug("push socket closed: a frame broke the protocol", metadata: ["key": "\(key)"])
            end(context: context, code: .protocolError, reason: "protocol error")
            return
        }
        if frame.opcode != .connectionClose, !takeFrameAllowance() {
            shared.metrics.floodingClientsClosed.increment()
            shared.logger.info("push socket closed: its client sends too many frames", metadata: ["key": "\(key)"])
            end(context: context, code: .policyViolation, reason: "too many frames")
            return
        }
        switch frame.opcode {
        case .ping:
            if context.channel.isWritable {
                context.writeAndFlush(wrapOutboundOut(WebSocketFrame(fin: true, opcode: .pong, data: frame.unmaskedData)), promise: nil)
            } else {
                // The client does not read what it was sent: its pong waits like a push, and a
                // newer ping's answer replaces it rather than queueing behind it.
                waitingPong = frame.unmaskedData
            }
        case .connectionClose:
            writer.clientHasLeft()
            if writer.noteCloseSent() {
                // The client answered the server's close: the handshake is done.
                context.close(promise: nil)
            } else {
                // The client leaves: answer with its code (a code it may send), then close.
                var data = frame.unmaskedData
                var answer = context.channel.allocator.buffer(capacity: 2)
                answer.write(webSocketErrorCode: Self.answer(to: data.readWebSocketErrorCode()))
                let loopBound = context.loopBound
                context.writeAndFlush(wrapOutboundOut(WebSocketFrame(fin: true, opcode: .connectionClose, data: answer)))
                    .whenComplete { _ in loopBound.value.close(promise: nil) }
            }
        default:
            break
        }
    }

    func channelWritabilityChanged(context: ChannelHandlerContext) {
        if context.channel.isWritable {
            slowReaderCut?.cancel()
            slowReaderCut = nil
            if let pong = waitingPong {
                waitingPong = nil
                context.writeAndFlush(wrapOutboundOut(WebSocketFrame(fin: true, opcode: .pong, data: pong)), promise: nil)
            }
            writer.drain()
        } else if slowReaderCut == nil {
            let (channel, shared, key) = (context.channel, shared, key)
            slowReaderCut = context.eventLoop.scheduleTask(in: TimeAmount(shared.slowReaderTimeout)) {
                guard !channel.isWritable else { return }
                shared.metrics.slowReadersClosed.increment()
                shared.logger.info("push socket closed: its reader does not read", metadata: ["key": "\(key)"])
                channel.close(promise: nil)
            }
        }
        context.fireChannelWritabilityChanged()
    }

    func userInboundEventTriggered(context: ChannelHandlerContext, event: Any) {
        if case .inputClosed = event as? ChannelEvent {
            // The client closed its side (Hummingbird allows half-closed connections): a push
            // socket has nothing more to say to it.
            writer.clientHasLeft()
            context.close(promise: nil)
        } else if event is ChannelShouldQuiesceEvent {
            // The application stops (without the sync server's own shutdown first): end the
            // socket as the server's shutdown would, or the application would wait on it.
            writer.close(.serverStopping)
        }
        context.fireUserInboundEventTriggered(event)
    }

    func channelInactive(context: ChannelHandlerContext) {
        slowReaderCut?.cancel()
        slowReaderCut = nil
        waitingPong = nil
        writer.clientHasLeft()
        ended()
        context.fireChannelInactive()
    }

    func errorCaught(context: ChannelHandlerContext, error: any Error) {
        // A protocol error (a frame too large, say) is answered by NIO's handler in front of
        // this one, which closes the connection once its close frame is written: closing here
        // would drop that frame. Any other error ends the connection.
        guard !(error is NIOWebSocketError) else { return }
        context.close(promise: nil)
    }

    /// Closes the socket for a rule its client broke: nothing more is pushed or read, a close
    /// frame says why, and the connection closes once it is written (a client that does not
    /// read it is cut by the slow-reader timeout, as any).
    ///
    /// The frame is followed by a FIN, and the connection closed a second later: closed at once
    /// with a flood still unread, the kernel would reset it and drop the frame not yet sent.
    private func end(context: ChannelHandlerContext, code: WebSocketErrorCode, reason: String) {
        isEnding = true
        waitingPong = nil
        writer.clientHasLeft()
        // What else a flood sent is not worth reading.
        try? context.channel.syncOptions?.setOption(ChannelOptions.autoRead, value: false)
        guard !writer.noteCloseSent() else {
            context.close(promise: nil)
            return
        }
        var data = context.channel.allocator.buffer(capacity: 2 + reason.utf8.count)
        data.write(webSocketErrorCode: code)
        data.writeString(reason)
        let channel = context.channel
        context.writeAndFlush(wrapOutboundOut(WebSocketFrame(fin: true, opcode: .connectionClose, data: data)))
            .whenComplete { _ in
                channel.close(mode: .output, promise: nil)
                channel.eventLoop.scheduleTask(in: .seconds(1)) { channel.close(promise: nil) }
            }
    }

    /// Takes one frame from the client's allowance, refilled for the time since it was last
    /// taken from; false when none is left.
    private func takeFrameAllowance() -> Bool {
        let now = NIODeadline.now()
        let elapsed = Double((now - allowanceRefilled).nanoseconds) / 1e9
        allowanceRefilled = now
        let rate = Double(max(1, shared.clientFramesPerSecond))
        frameAllowance = min(Double(Self.burst(shared.clientFramesPerSecond)), frameAllowance + elapsed * rate)
        guard frameAllowance >= 1 else { return false }
        frameAllowance -= 1
        return true
    }

    /// How many frames a client may send at once: twice its rate per second.
    private static func burst(_ framesPerSecond: Int) -> Int {
        2 * max(1, framesPerSecond)
    }

    /// Whether `frame` keeps the rules of RFC 6455 that NIO's decoder does not check (it checks
    /// the length and that control frames are short and whole): a client masks every frame
    /// (section 5.1), sets no reserved bit without an extension that gives it a meaning, and
    /// none was agreed (5.2), and uses no reserved opcode (5.2).
    private static func followsProtocol(_ frame: WebSocketFrame) -> Bool {
        guard frame.maskKey != nil, !frame.rsv1, !frame.rsv2, !frame.rsv3 else { return false }
        switch frame.opcode {
        case .continuation, .text, .binary, .connectionClose, .ping, .pong: return true
        default: return false
        }
    }

    /// The code that answers a client's close: its own, unless it is one a close frame may not
    /// carry (none, 1005, 1006, 1015, or outside the ranges in use), then 1000.
    private static func answer(to code: WebSocketErrorCode?) -> WebSocketErrorCode {
        guard let code else { return .normalClosure }
        let number = UInt16(webSocketErrorCode: code)
        let sendable = (1000...1003).contains(number) || (1007...1014).contains(number) || (3000...4999).contains(number)
        return sendable ? code : .normalClosure
    }
}
