import Foundation
import Hummingbird
import HummingbirdWebSocket
import NIOCore
import NIOHTTP1
import NIOPosix
import NIOWebSocket
import StateLoopSync
import TestSupport
import Testing

@testable import StateLoopSyncTransports

/// Servers that answer the push upgrade wrongly, or break the protocol once upgraded. Each must
/// cost the client a doubling backoff (1, 2, 4 then 8 s at most, on the push source's virtual
/// clock) and no file descriptor: before, a 101 with a wrong `Sec-WebSocket-Accept` left every
/// attempt's socket open, and Nightride's client ran out of descriptors within a minute.
///
/// The attempts themselves run on real loopback sockets (the virtual clock makes the backoffs
/// instant), so every wait is bounded, generously: the suite runs beside CPU hogs.
@Suite("WebSocket push: hostile servers cost a doubling backoff and no descriptor", .timeLimit(.minutes(5)))
struct HostileServerTests {
    /// The backoffs of ten attempts: doubling from 1 s, then the maximum.
    static let expectedBackoffs: [Duration] = [1, 2, 4, 8, 8, 8, 8, 8, 8, 8].map { .seconds($0) }

    @Test("a 101 with a wrong Sec-WebSocket-Accept, the connection kept open by the server")
    func wrongAccept() async throws {
        let reply =
            "HTTP/1.1 101 Switching Protocols\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n"
            + "Sec-WebSocket-Accept: bm90IHRoZSBhbnN3ZXIgdG8gdGhlIGtleQ==\r\n\r\n"
        try await withRawServer(reply: reply) { port, requests in
            try await expectBackoffWithoutLeaks(port: port, attempts: requests)
        }
    }

    @Test("an answer that is not HTTP at all, the connection kept open by the server")
    func notHTTP() async throws {
        try await withRawServer(reply: "\u{1}\u{2} this is no HTTP answer \u{1B}[2J\r\n\r\n") { port, requests in
            try await expectBackoffWithoutLeaks(port: port, attempts: requests)
        }
    }

    @Test("a proper upgrade followed by bytes that are no WebSocket frame (reserved bits, an unknown opcode)")
    func garbageAfterUpgrade() async throws {
        // FIN and the three reserved bits with opcode 3 (reserved), five bytes of payload.
        let garbage: [UInt8] = [0xF3, 0x05] + Array("hello".utf8)
        try await withUpgradingServer(sendingAfterUpgrade: garbage) { port, upgrades in
            try await expectBackoffWithoutLeaks(port: port, attempts: upgrades)
        }
    }

    @Test("a push frame over the size limit, sent at once by every connection")
    func oversizedFrame() async throws {
        let oversized = #"{"version":{"epoch":0,"counter":2},"value":""# + String(repeating: "x", count: 1 << 20) + #""}"#
        try await expectBackoffAgainstUpgradingServer(sending: [oversized])
    }

    @Test("a server that closes every connection at once")
    func closedAtOnce() async throws {
        try await expectBackoffAgainstUpgradingServer(sending: [])
    }

    /// A server that upgrades every push socket, sends it `messages`, then closes it: each
    /// upgrade it sees is one attempt of the source, whose backoff and sockets are checked.
    private func expectBackoffAgainstUpgradingServer(sending messages: [String]) async throws {
        let log = SocketServerLog()
        let sockets = Router(context: BasicWebSocketRequestContext.self)
        sockets.ws("push") { _, _ in
            .upgrade()
        } onUpgrade: { _, outbound, _ in
            await log.serve(outbound, messages: messages)
        }
        try await withLoopback(Router(), sockets: sockets) { port in
            let upgrades = Inbox<Void>()
            let forward = Task {
                var seen = 0
                while !Task.isCancelled {
                    let count = log.upgrades.elements.count
                    while seen < count {
                        seen += 1
                        upgrades.put(())
                    }
                    try? await Task.sleep(for: .milliseconds(10))
                }
            }
            defer { forward.cancel() }
            try await expectBackoffWithoutLeaks(port: port, attempts: upgrades)
        }
    }

    @Test("a refused connection (nothing listens)")
    func refusedConnection() async throws {
        // A port bound but not listening: connecting is refused, and no other test of this
        // process can take the port (and count its own sockets to it) while this one runs.
        let (descriptor, port) = try LoopbackSocket.boundWithoutListening()
        defer { close(descriptor) }
        let clock = VirtualClock()
        let push = WebSocketPush<String>(
            url: "ws://127.0.0.1:\(port)/push", initialBackoff: .seconds(1), maxBackoff: .seconds(8), pingInterval: nil, clock: clock
        )
        let task = Task { await push.run { _ in } }
        let sleeps = try await clock.sleeps.waitFor(10, seconds: 60)
        #expect(Array(sleeps.prefix(10)) == Self.expectedBackoffs)
        // The attempt under way may hold its socket until NIO has seen the refusal: once the
        // source is stopped, none may be left (closing is asynchronous).
        task.cancel()
        await task.value
        let open = await openSockets(to: port, atMost: 0)
        #expect(open == 0, "sockets left open to a port that refuses connections")
    }

    /// Runs a push source against the server on `port` until ten attempts have reached it, and
    /// checks its backoffs and sockets: each backoff doubles up to the maximum, and once the
    /// source is stopped none of its sockets to the server is left open (a leak keeps one per
    /// attempt, the server holding its side open).
    private func expectBackoffWithoutLeaks(port: Int, attempts: Inbox<Void>) async throws {
        let clock = VirtualClock()
        let push = WebSocketPush<String>(
            url: "ws://127.0.0.1:\(port)/push", initialBackoff: .seconds(1), maxBackoff: .seconds(8), healthyAfter: .seconds(5),
            // A ping on the real clock finds a connection the server left half-open.
            pingInterval: .milliseconds(500), handshakeTimeout: .seconds(20), clock: clock
        )
        let task = Task { await push.run { _ in } }
        _ = try await attempts.waitFor(10, seconds: 60)
        let sleeps = try await clock.sleeps.waitFor(9, seconds: 60)
        #expect(Array(sleeps.prefix(9)) == Array(Self.expectedBackoffs.prefix(9)), "backoffs: \(sleeps)")
        // While it runs, only the attempt under way holds a socket (and one or two whose close
        // NIO has not finished).
        #expect(openSockets(to: port) <= 3, "sockets to the server after \(attempts.elements.count) attempts")
        task.cancel()
        await task.value
        // Closing is asynchronous (NIO closes on its event loop).
        let open = await openSockets(to: port, atMost: 0)
        #expect(open == 0, "sockets left open to the server after \(attempts.elements.count) attempts")
    }

    /// A TCP server on loopback that reads each request head, answers `reply` and keeps the
    /// connection open (until the client closes it); `body` gets its port and one element per
    /// request.
    private func withRawServer(reply: String, _ body: (Int, Inbox<Void>) async throws -> Void) async throws {
        let requests = Inbox<Void>()
        let channel = try await ServerBootstrap(group: MultiThreadedEventLoopGroup.singleton)
            .serverChannelOption(ChannelOptions.socketOption(.so_reuseaddr), value: 1)
            .childChannelInitializer { channel in
                channel.eventLoop.makeCompletedFuture {
                    try channel.pipeline.syncOperations.addHandler(ReplyAfterHead(reply: reply, requests: requests))
                }
            }
            .bind(host: "127.0.0.1", port: 0)
            .get()
        await run(body, port: channel.localAddress?.port, inbox: requests, closing: channel)
    }

    /// A WebSocket server on loopback (NIO's own upgrader, so the handshake is right) that
    /// writes `bytes` raw as soon as a connection is upgraded, and keeps it open.
    private func withUpgradingServer(sendingAfterUpgrade bytes: [UInt8], _ body: (Int, Inbox<Void>) async throws -> Void) async throws {
        let upgrades = Inbox<Void>()
        let channel = try await ServerBootstrap(group: MultiThreadedEventLoopGroup.singleton)
            .serverChannelOption(ChannelOptions.socketOption(.so_reuseaddr), value: 1)
            .childChannelInitializer { channel in
                let upgrader = NIOWebSocketServerUpgrader(
                    shouldUpgrade: { channel, _ in channel.eventLoop.makeSucceededFuture(HTTPHeaders()) },
                    upgradePipelineHandler: { channel, _ in
                        upgrades.put(())
                        // First in the pipeline: the bytes go out as they are, not as a frame.
                        return channel.eventLoop.makeCompletedFuture {
                            try channel.pipeline.syncOperations.addHandler(RawBytesOnAdd(bytes: bytes), position: .first)
                        }
                    }
                )
                return channel.pipeline.configureHTTPServerPipeline(
                    withServerUpgrade: (upgraders: [upgrader], completionHandler: { _ in })
                )
            }
            .bind(host: "127.0.0.1", port: 0)
            .get()
        await run(body, port: channel.localAddress?.port, inbox: upgrades, closing: channel)
    }

    /// Runs `body` with the server's port, then closes the server, whether `body` threw or not
    /// (a thrown error is recorded).
    private func run(_ body: (Int, Inbox<Void>) async throws -> Void, port: Int?, inbox: Inbox<Void>, closing channel: any Channel) async {
        do {
            try await body(try #require(port), inbox)
        } catch {
            Issue.record(error)
        }
        try? await channel.close()
    }
}

/// The sockets of this process (its entries in `/proc/self/fd`) whose TCP connection goes to
/// `port` on loopback: the push source's side of its connections to a test server.
func openSockets(to port: Int) -> Int {
    var inodes = Set<Substring>()
    for table in ["/proc/self/net/tcp", "/proc/self/net/tcp6"] {
        // Read to the end: the kernel hands these tables out a page per read, and a single
        // read (as `String(contentsOfFile:)` makes of a file whose size says 0) stops at the first.
        guard let handle = FileHandle(forReadingAtPath: table) else { continue }
        defer { try? handle.close() }
        guard let data = try? handle.readToEnd() else { continue }
        let text = String(decoding: data, as: UTF8.self)
        for line in text.split(separator: "\n").dropFirst() {
            let fields = line.split(separator: " ", omittingEmptySubsequences: true)
            // fields[2]: the remote address, "0100007F:1F90"; fields[9]: the socket's inode.
            guard fields.count > 9, let remotePort = fields[2].split(separator: ":").last, Int(remotePort, radix: 16) == port,
                fields[9] != "0"
            else { continue }
            inodes.insert(fields[9])
        }
    }
    let descriptors = (try? FileManager.default.contentsOfDirectory(atPath: "/proc/self/fd")) ?? []
    return descriptors.filter { descriptor in
        guard let target = try? FileManager.default.destinationOfSymbolicLink(atPath: "/proc/self/fd/\(descriptor)"),
            target.hasPrefix("socket:[")
        else { return false }
        return inodes.contains(target.dropFirst("socket:[".count).dropLast())
    }.count
}

/// ``openSockets(to:)``, polled until it is at most `limit` or 10 s (times ``hangGuardScale``)
/// have passed, since NIO closes sockets on its event loop, after the call that ends them.
func openSockets(to port: Int, atMost limit: Int) async -> Int {
    let deadline = ContinuousClock.now + .seconds(10) * hangGuardScale
    var open = openSockets(to: port)
    while open > limit, ContinuousClock.now < deadline {
        try? await Task.sleep(for: .milliseconds(50))
        open = openSockets(to: port)
    }
    return open
}

/// Reads bytes until the end of a request head, then writes `reply` and leaves the connection
/// open.
private final class ReplyAfterHead: ChannelInboundHandler, @unchecked Sendable {
    typealias InboundIn = ByteBuffer
    typealias OutboundOut = ByteBuffer
    private let reply: String
    private let requests: Inbox<Void>
    private var head = ""

    init(reply: String, requests: Inbox<Void>) {
        self.reply = reply
        self.requests = requests
    }

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        var buffer = unwrapInboundIn(data)
        head += buffer.readString(length: buffer.readableBytes) ?? ""
        if head.contains("\r\n\r\n") {
            head = ""
            requests.put(())
            context.writeAndFlush(wrapOutboundOut(ByteBuffer(string: reply)), promise: nil)
        }
    }
}

/// Writes `bytes` as soon as it is added to a pipeline.
private final class RawBytesOnAdd: ChannelInboundHandler, @unchecked Sendable {
    typealias InboundIn = ByteBuffer
    typealias OutboundOut = ByteBuffer
    private let bytes: [UInt8]

    init(bytes: [UInt8]) {
        self.bytes = bytes
    }

    func handlerAdded(context: ChannelHandlerContext) {
        context.writeAndFlush(wrapOutboundOut(ByteBuffer(bytes: bytes)), promise: nil)
    }
}
