import Foundation
import NIOCore
import ServerTestApp
import Synchronization
import Testing

@testable import StateLoopServer

/// What reaches the server before any route: request heads that are garbage, too long, or
/// never finished. Each is answered (when an answer can be given) and closed, so that such
/// connections cannot pile up.
@Suite("Sync server: connections", .timeLimit(.minutes(5)))
struct ConnectionTests {
    @Test("a request head that is not HTTP is answered 400 and closed")
    func garbageHead() async throws {
        try await withNotesServer { _, client in
            for garbage in ["GARBAGE\r\n\r\n", "GET\r\n\r\n", "\r\n\r\n", "GET / HTTP/9.9\r\n\r\n"] {
                let connection = try RawConnection(port: client.port)
                connection.send(Array(garbage.utf8))
                let (text, closed) = await connection.readUntilClosed(within: .seconds(30))
                #expect(text.hasPrefix("HTTP/1.1 400"), "\(garbage.debugDescription): \(text)")
                #expect(closed, "\(garbage.debugDescription) left the connection open")
            }
            // The server keeps serving.
            #expect(try await client.send("GET", "board", as: "ann").status == 404)
        }
    }

    @Test("a request line or headers over the limit are answered 431 and closed")
    func headTooLarge() async throws {
        try await withNotesServer { _, client in
            let connection = try RawConnection(port: client.port)
            connection.send(Array(("GET /" + String(repeating: "a", count: 100_000) + " HTTP/1.1\r\n\r\n").utf8))
            let (text, closed) = await connection.readUntilClosed(within: .seconds(30))
            #expect(text.hasPrefix("HTTP/1.1 431"), "\(text.prefix(200))")
            #expect(closed)
            let headers = try RawConnection(port: client.port)
            headers.send(Array(("GET /board HTTP/1.1\r\nHost: x\r\nX-Big: " + String(repeating: "b", count: 100_000) + "\r\n\r\n").utf8))
            #expect(await headers.readUntilClosed(within: .seconds(30)).text.hasPrefix("HTTP/1.1 431"))
        }
    }

    @Test("a connection that never finishes its request head is answered 408 and closed after the head timeout")
    func unfinishedHead() async throws {
        let server = SyncServer(store: try SQLiteStore(), access: Notes.Rules())
        try await withRunning(server, requestHeadTimeout: .milliseconds(300)) { port in
            let silent = try RawConnection(port: port)
            let partial = try RawConnection(port: port)
            partial.send(Array("GET /me/todos HTTP/1.1\r\nHost: 127".utf8))
            for connection in [silent, partial] {
                let (text, closed) = await connection.readUntilClosed(within: .seconds(30))
                #expect(closed, "still open after 5 s")
                #expect(text.hasPrefix("HTTP/1.1 408"), "\(text)")
            }
        }
    }

    @Test(
        "a server that stops answers 503 and closes, at once, every connection whose request head has not come: the stop does not wait for the head timeout"
    )
    func stoppingWithoutHead() async throws {
        let server = SyncServer(store: try SQLiteStore(), access: Notes.Rules())
        // A head timeout and a shutdown allowed far longer than the test allows: only the guard's
        // answer ends these connections in time.
        let (host, port) = try await startHost(server, requestHeadTimeout: .seconds(600), shutdownTimeout: .seconds(600))
        let silent = try RawConnection(port: port)
        let partial = try RawConnection(port: port)
        partial.send(Array("GET /me/todos HTTP/1.1\r\nHost: 127".utf8))
        // Both accepted before the stop: the listener accepts in the order connections came, so
        // once a later connection is answered, the two were accepted (a sleep was not enough on
        // a loaded machine: a connection still in the backlog is reset, with no answer).
        let probe = try RawConnection(port: port)
        _ = probe.send(Array("GET /nothing HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: close\r\n\r\n".utf8))
        #expect(await probe.readUntilClosed(within: .seconds(30)).text.hasPrefix("HTTP/1.1 "))
        let stopping = ContinuousClock.now
        async let stopped: Void = host.stop()
        // The bounds tell "at once" from the 600 s head timeout, with room for a loaded machine
        // (a loaded CI run took 22 s to stop).
        for connection in [silent, partial] {
            let (text, closed) = await connection.readUntilClosed(within: .seconds(120))
            #expect(closed, "still open 120 s into the stop")
            #expect(text.hasPrefix("HTTP/1.1 503"), "\(text)")
        }
        await stopped
        #expect(ContinuousClock.now - stopping < .seconds(120), "stopped after \(ContinuousClock.now - stopping)")
    }

    @Test("every accepted connection has TCP keepalive timed from deadPeerTimeout and a small first receive buffer")
    func connectionTuning() async throws {
        let seen = ConnectionProbe.Log()
        let configuration = SyncServerConfiguration(deadPeerTimeout: .seconds(20))
        let server = SyncServer(store: try SQLiteStore(), access: Notes.Rules(), configuration: configuration)
        try await withRunning(server, additionalChannelHandlers: { [ConnectionProbe(seen: seen)] }) { port in
            let connection = try RawConnection(port: port)
            connection.send(Array("GET /me/todos HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: close\r\n\r\n".utf8))
            // Answered (404: this server declares nothing), then closed: the connection went
            // through the server's setup. (A loaded run can take more than a second to answer.)
            #expect(await connection.readUntilClosed(within: .seconds(30)).text.hasPrefix("HTTP/1.1 404"))
        }
        let options = try #require(seen.all.first)
        #expect(options.keepAlive != 0)
        // A vanished peer is dropped about 20 s after it fell silent: probes from 10 s on,
        // three of them over the other 10 s.
        #expect(options.idle == 10 && options.interval == 3 && options.probes == 3)
        #expect(options.initialReceiveBytes == 512)
        // Sent data unacknowledged for 20 s drops the connection too (keepalive waits for it).
        #expect(options.userTimeout == 20_000)
    }
}

/// Reads the socket options of each connection it is added to (after the server's own setup).
private final class ConnectionProbe: ChannelInboundHandler, RemovableChannelHandler, Sendable {
    typealias InboundIn = NIOAny

    struct Options: Sendable {
        var keepAlive: SocketOptionValue
        var idle: SocketOptionValue
        var interval: SocketOptionValue
        var probes: SocketOptionValue
        var initialReceiveBytes: Int?
        var userTimeout: SocketOptionValue
    }

    /// What the probes of a server's connections found.
    final class Log: Sendable {
        private let options = Mutex<[Options]>([])

        func append(_ found: Options) { options.withLock { $0.append(found) } }
        var all: [Options] { options.withLock { $0 } }
    }

    private let seen: Log

    init(seen: Log) {
        self.seen = seen
    }

    func handlerAdded(context: ChannelHandlerContext) {
        guard let options = context.channel.syncOptions else { return }
        func tcp(_ name: Int32) -> SocketOptionValue {
            (try? options.getOption(ChannelOptions.Types.SocketOption(level: .tcp, name: NIOBSDSocket.Option(rawValue: name)))) ?? -1
        }
        let found = Options(
            keepAlive: (try? options.getOption(ChannelOptions.socketOption(.so_keepalive))) ?? 0,
            idle: tcp(Int32(TCP_KEEPIDLE)), interval: tcp(Int32(TCP_KEEPINTVL)), probes: tcp(Int32(TCP_KEEPCNT)),
            initialReceiveBytes: (try? options.getOption(ChannelOptions.recvAllocator) as? AdaptiveRecvByteBufferAllocator)?.initial,
            userTimeout: tcp(Int32(TCP_USER_TIMEOUT))
        )
        seen.append(found)
    }
}
