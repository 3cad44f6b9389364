import Foundation
import NIOCore
import NIOHTTP1
import NIOPosix
import NIOWebSocket
import Synchronization

/// Push sockets that only read frames: a WebSocket upgrade, then a handler that counts each text
/// frame into a ``FrameTally``, answers pings, and nothing else. No task, resource or decoder
/// per socket, so that ten thousand of them in one process cost the server, not this process,
/// what the benchmark measures.
///
/// Threading: each socket lives on an event loop of `group`; the tally is shared and atomic.
public enum LightSocket {
    /// Opens one socket per `Authorization` header value on `path` of the server at `port`,
    /// `concurrency` handshakes at a time. Returns the channels once every upgrade is done.
    public static func connect(
        authorizations: [String],
        port: Int,
        path: String,
        tally: FrameTally,
        group: MultiThreadedEventLoopGroup,
        concurrency: Int = 200
    ) async throws -> [any Channel] {
        try await withThrowingTaskGroup(of: (any Channel).self) { handshakes in
            var channels: [any Channel] = []
            channels.reserveCapacity(authorizations.count)
            var next = 0
            func start() {
                let token = authorizations[next]
                next += 1
                handshakes.addTask { try await open(port: port, path: path, authorization: token, tally: tally, group: group) }
            }
            while next < min(concurrency, authorizations.count) { start() }
            while let channel = try await handshakes.next() {
                channels.append(channel)
                if next < authorizations.count { start() }
            }
            return channels
        }
    }

    private enum Upgrade: Sendable {
        case upgraded(any Channel)
        case refused
    }

    private static func open(port: Int, path: String, authorization: String, tally: FrameTally, group: MultiThreadedEventLoopGroup) async throws
        -> any Channel
    {
        let upgrade: EventLoopFuture<Upgrade> = try await ClientBootstrap(group: group)
            .connect(host: "127.0.0.1", port: port) { channel in
                channel.eventLoop.makeCompletedFuture {
                    let upgrader = NIOTypedWebSocketClientUpgrader<Upgrade>(maxFrameSize: 1 << 16) { channel, _ in
                        channel.eventLoop.makeCompletedFuture {
                            try channel.pipeline.syncOperations.addHandler(FrameCounter(tally: tally))
                            return Upgrade.upgraded(channel)
                        }
                    }
                    var headers = HTTPHeaders()
                    headers.add(name: "Host", value: "127.0.0.1:\(port)")
                    headers.add(name: "Authorization", value: authorization)
                    headers.add(name: "Content-Length", value: "0")
                    let head = HTTPRequestHead(version: .http1_1, method: .GET, uri: path, headers: headers)
                    let configuration = NIOTypedHTTPClientUpgradeConfiguration(
                        upgradeRequestHead: head,
                        upgraders: [upgrader],
                        notUpgradingCompletionHandler: { channel in channel.eventLoop.makeSucceededFuture(Upgrade.refused) }
                    )
                    var pipeline = NIOUpgradableHTTPClientPipelineConfiguration(upgradeConfiguration: configuration)
                    // The server's first frame often shares a read with its 101: keep it.
                    pipeline.leftOverBytesStrategy = .forwardBytes
                    return try channel.pipeline.syncOperations.configureUpgradableHTTPClientPipeline(configuration: pipeline)
                }
            }
        switch try await upgrade.get() {
        case .upgraded(let channel):
            return channel
        case .refused:
            throw SetupFailure(message: "the server refused a push socket's upgrade on \(path)")
        }
    }
}

/// Counts a socket's text frames into the tally and answers the server's pings.
private final class FrameCounter: ChannelInboundHandler {
    typealias InboundIn = WebSocketFrame
    typealias OutboundOut = WebSocketFrame

    private let tally: FrameTally

    init(tally: FrameTally) {
        self.tally = tally
    }

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        let frame = unwrapInboundIn(data)
        switch frame.opcode {
        case .text, .binary:
            tally.frameArrived(bytes: frame.length)
        case .ping:
            let pong = WebSocketFrame(fin: true, opcode: .pong, data: frame.unmaskedData)
            context.writeAndFlush(wrapOutboundOut(pong), promise: nil)
        case .connectionClose:
            tally.socketClosed()
            context.close(promise: nil)
        default:
            break
        }
    }
}

/// Every light socket's frames, counted: a round waits until the count reaches its target and
/// learns when the last frame of it arrived.
public final class FrameTally: Sendable {
    private struct State {
        var frames = 0
        var payloadBytes = 0
        var closed = 0
        var target = Int.max
        var reachedAt: ContinuousClock.Instant?
        var waiter: CheckedContinuation<ContinuousClock.Instant, any Error>?
    }

    private let state = Mutex(State())

    /// A tally of no frames, expecting none.
    public init() {}

    public var frames: Int { state.withLock { $0.frames } }
    /// The text and binary frames' payload bytes, all sockets together.
    public var payloadBytes: Int { state.withLock { $0.payloadBytes } }
    public var closed: Int { state.withLock { $0.closed } }

    /// Called on a socket's event loop for each frame: takes the time before the lock, so the
    /// instant is the frame's, not the lock's.
    func frameArrived(bytes: Int) {
        let now = ContinuousClock.now
        let waiter = state.withLock { state -> CheckedContinuation<ContinuousClock.Instant, any Error>? in
            state.frames += 1
            state.payloadBytes += bytes
            guard state.frames == state.target else { return nil }
            state.reachedAt = now
            defer { state.waiter = nil }
            return state.waiter
        }
        waiter?.resume(returning: now)
    }

    func socketClosed() {
        state.withLock { $0.closed += 1 }
    }

    /// Sets the count a round waits for: call it before the change, so that no frame of the
    /// round can come first.
    public func expect(_ target: Int) {
        state.withLock { state in
            state.target = target
            state.reachedAt = state.frames >= target ? .now : nil
        }
    }

    /// Waits until the expected count of frames has arrived; returns when the last of them did.
    /// Fails after `limit` with what arrived, so that a lost frame cannot hang the benchmark.
    public func wait(orFailAfter limit: Duration) async throws -> ContinuousClock.Instant {
        let timeout = Task {
            try await Task.sleep(for: limit)
            let (waiter, frames, target, closed) = state.withLock { state in
                defer { state.waiter = nil }
                return (state.waiter, state.frames, state.target, state.closed)
            }
            waiter?.resume(throwing: SetupFailure(message: "\(frames) of \(target) frames within \(limit) (\(closed) sockets closed by the server)"))
        }
        defer { timeout.cancel() }
        return try await withCheckedThrowingContinuation { continuation in
            let reached = state.withLock { state -> ContinuousClock.Instant? in
                if let reached = state.reachedAt { return reached }
                state.waiter = continuation
                return nil
            }
            if let reached { continuation.resume(returning: reached) }
        }
    }
}
