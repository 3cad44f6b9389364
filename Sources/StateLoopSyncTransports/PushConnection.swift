import Foundation
import HTTPTypes
import Logging
import NIOCore
import NIOHTTP1
import NIOPosix
import NIOSSL
import NIOWebSocket
import Synchronization
@_spi(WSInternal) import WSCore

/// Where a push source connects: the parts of its `ws://` or `wss://` address that the
/// connection needs.
struct PushTarget: Sendable, Equatable {
    let host: String
    let port: Int
    let usesTLS: Bool
    /// The request target of the upgrade: the path and the query.
    let requestTarget: String

    /// `nil` for an address that is not `ws://` or `wss://` with a host.
    init?(_ address: String) {
        guard let components = URLComponents(string: address), let host = components.host, !host.isEmpty else { return nil }
        switch components.scheme?.lowercased() {
        case "ws"?: usesTLS = false
        case "wss"?: usesTLS = true
        default: return nil
        }
        // URLComponents keeps an IPv6 literal's brackets, which a connection does not take.
        self.host = host.hasPrefix("[") && host.hasSuffix("]") ? String(host.dropFirst().dropLast()) : host
        port = components.port ?? (usesTLS ? 443 : 80)
        let path = components.percentEncodedPath.isEmpty ? "/" : components.percentEncodedPath
        requestTarget = path + (components.percentEncodedQuery.map { "?" + $0 } ?? "")
        hostHeader = components.port.map { "\(components.host ?? host):\($0)" } ?? (components.host ?? host)
    }

    /// The `Host` header of the upgrade request.
    let hostHeader: String

    /// Whether the host is an IP address, which TLS may not name as the server (SNI).
    var hostIsIPAddress: Bool {
        (try? SocketAddress(ipAddress: host, port: port)) != nil
    }
}

/// What the server made of an upgrade request.
enum PushUpgrade: Sendable {
    /// Upgraded: the WebSocket, its frames in and out.
    case upgraded(NIOAsyncChannel<WebSocketFrame, WebSocketFrame>)
    /// Answered with something other than 101.
    case notUpgraded
}

/// The one socket of a connection attempt, so that whoever ends the attempt can close it.
///
/// swift-websocket's client keeps the socket of an upgrade that failed (a refusal, a 101 with a
/// wrong `Sec-WebSocket-Accept`, garbage where a response was due) and of an upgrade given up at
/// its deadline, with no way to reach it: a hostile or broken server then cost its clients one
/// file descriptor per reconnection, until the process ran out of them. Every attempt's socket
/// is held here from its creation, and closed by the attempt's end, whatever that end is.
final class PushSocket: Sendable {
    private struct State {
        var channel: (any Channel)?
        var closed = false
    }

    private let state = Mutex(State())

    /// Set when the client sent a close that blames the server: a protocol error, a message
    /// over the limit, data it could not take.
    private let blamedServer = Mutex(false)

    /// Whether the client ended the connection for a fault of the server's.
    var endedOnProtocolFailure: Bool {
        blamedServer.withLock { $0 }
    }

    /// Records that the client sent a close with `code`.
    func clientSentClose(_ code: WebSocketErrorCode?) {
        switch code {
        case .protocolError?, .messageTooLarge?, .unacceptableData?, .dataInconsistentWithMessage?:
            blamedServer.withLock { $0 = true }
        default:
            break
        }
    }

    /// Takes the attempt's channel as NIO creates it; one closed meanwhile is closed at once.
    func adopt(_ channel: any Channel) {
        let closeNow = state.withLock { state in
            state.channel = channel
            return state.closed
        }
        if closeNow { channel.close(promise: nil) }
    }

    /// Closes the socket now, or as soon as it exists; closing twice is harmless.
    func close() {
        let channel: (any Channel)? = state.withLock { state in
            state.closed = true
            return state.channel
        }
        channel?.close(promise: nil)
    }
}

/// The context swift-websocket's frame handling hands the message handler: its logger.
struct PushSocketContext: WebSocketContext {
    let logger: Logger
}

extension PushTarget {
    /// Opens a TCP connection (with TLS for `wss`) into `socket` and sends the upgrade request
    /// with `headers`; returns what the server answered. Once upgraded, a close the client sends
    /// ends the connection within `closeDeadline`, answered or not. Throws for a connection that failed or
    /// a handshake that broke (a wrong `Sec-WebSocket-Accept`, a response that is not HTTP); the
    /// caller closes `socket` then.
    func upgrade(
        headers: HTTPFields, maximumFrameBytes: Int, closeDeadline: TimeAmount, tls: NIOSSLContext?, socket: PushSocket
    ) async throws -> PushUpgrade {
        var head = HTTPRequestHead(version: .http1_1, method: .GET, uri: requestTarget)
        head.headers.add(name: "Host", value: hostHeader)
        for field in headers {
            head.headers.add(name: field.name.rawName, value: field.value)
        }
        let upgrader = NIOTypedWebSocketClientUpgrader<PushUpgrade>(
            maxFrameSize: maximumFrameBytes,
            upgradePipelineHandler: { channel, _ in
                channel.eventLoop.makeCompletedFuture {
                    // Behind NIO's frame encoder, so that it sees the frames the client sends.
                    try channel.pipeline.syncOperations.addHandler(CloseDeadline(socket: socket, deadline: closeDeadline))
                    return .upgraded(try NIOAsyncChannel<WebSocketFrame, WebSocketFrame>(wrappingChannelSynchronously: channel))
                }
            }
        )
        var configuration = NIOUpgradableHTTPClientPipelineConfiguration(
            upgradeConfiguration: NIOTypedHTTPClientUpgradeConfiguration(
                upgradeRequestHead: head,
                upgraders: [upgrader],
                notUpgradingCompletionHandler: { channel in channel.eventLoop.makeSucceededFuture(.notUpgraded) }
            )
        )
        // Frames the server sends right behind its 101 arrive in the same read: kept for the
        // WebSocket, not dropped with the HTTP handlers.
        configuration.leftOverBytesStrategy = .forwardBytes
        let pipeline = configuration
        let serverHostname = hostIsIPAddress ? nil : host
        let answer = try await ClientBootstrap(group: MultiThreadedEventLoopGroup.singleton)
            // As swift-websocket's own client: a server that closes its side mid-upgrade leaves
            // the attempt to its deadline (see `WebSocketPush`'s `handshakeTimeout`), which then
            // closes the socket.
            .channelOption(ChannelOptions.allowRemoteHalfClosure, value: true)
            .connect(host: host, port: port) { channel in
                socket.adopt(channel)
                return channel.eventLoop.makeCompletedFuture {
                    if let tls {
                        try channel.pipeline.syncOperations.addHandler(NIOSSLClientHandler(context: tls, serverHostname: serverHostname))
                    }
                    return try channel.pipeline.syncOperations.configureUpgradableHTTPClientPipeline(configuration: pipeline)
                }
            }
        return try await answer.get()
    }
}

/// Closes the connection `deadline` after the client sent a close frame, and tells `socket` why
/// the client closed.
///
/// swift-websocket's client answers a protocol error (a reserved opcode, reserved bits, a
/// message over the limit) with a close frame, then waits for the server to close the
/// connection, with no deadline while its message handler still reads: a server that breaks
/// the protocol and then says nothing held the connection, silent and useless, for good.
private final class CloseDeadline: ChannelOutboundHandler, RemovableChannelHandler {
    typealias OutboundIn = WebSocketFrame
    typealias OutboundOut = WebSocketFrame

    private let socket: PushSocket
    private let deadline: TimeAmount
    private var scheduled = false

    init(socket: PushSocket, deadline: TimeAmount) {
        self.socket = socket
        self.deadline = deadline
    }

    func write(context: ChannelHandlerContext, data: NIOAny, promise: EventLoopPromise<Void>?) {
        let frame = unwrapOutboundIn(data)
        if frame.opcode == .connectionClose, !scheduled {
            scheduled = true
            var payload = frame.unmaskedData
            socket.clientSentClose(payload.readInteger(as: UInt16.self).map { WebSocketErrorCode(codeNumber: Int($0)) })
            let channel = context.channel
            context.eventLoop.scheduleTask(in: deadline) {
                channel.close(promise: nil)
            }
        }
        context.write(data, promise: promise)
    }
}
