import Logging
import NIOCore
import NIOWebSocket

/// The end of one push socket's pipeline, after NIO's WebSocket frame codec and protocol-error
/// handler: answers the client's pings and its close, resumes the writer when the channel can
/// take more, cuts off a reader that stops reading, and ends the socket when the connection
/// goes.
///
/// Frames from the client other than pings and close are read and ignored (a push socket only
/// sends); one over the frame limit is answered by NIO's error handler with close 1009.
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

    /// A handler for `writer`'s socket, following `key`; `ended` runs once, when the connection
    /// closes.
    init(writer: PushSocketWriter, shared: PushWriting, key: ResourceKey, ended: @escaping @Sendable () -> Void) {
        self.writer = writer
        self.shared = shared
        self.key = key
        self.ended = ended
    }

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        let frame = unwrapInboundIn(data)
        switch frame.opcode {
        case .ping:
            let pong = WebSocketFrame(fin: true, opcode: .pong, data: frame.unmaskedData)
            context.writeAndFlush(wrapOutboundOut(pong), promise: nil)
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

    /// The code that answers a client's close: its own, unless it is one a close frame may not
    /// carry (none, 1005, 1006, 1015, or outside the ranges in use), then 1000.
    private static func answer(to code: WebSocketErrorCode?) -> WebSocketErrorCode {
        guard let code else { return .normalClosure }
        let number = UInt16(webSocketErrorCode: code)
        let sendable = (1000...1003).contains(number) || (1007...1014).contains(number) || (3000...4999).contains(number)
        return sendable ? code : .normalClosure
    }
}
