import Foundation
import HTTPTypes
import Hummingbird
import Logging
import NIOCore
import NIOEmbedded
import NIOWebSocket
import StateLoopServer
import StateLoopSyncTransports

/// A server in the calling process as the transport of an app's `SyncEndpoint`: the app's
/// resources, mutations and requests reach the server's routes with no socket
/// (``InProcessHTTPClient``), and each push socket is the kit's own, opened on one of NIO's
/// testing channels whose event loop this transport runs every ``tick`` of its clock. The app and the
/// server run unchanged, in one process, on one clock: a test needs no port, and a simulation
/// (StateLoopSimulation) runs both from its seed, given a store that runs its transactions on
/// the calling thread (`SQLiteStore(blocking: true)`), its `SimulationClock`, and
/// `runsInSimulation`.
///
/// ```swift
/// let server = SyncServer(store: try SQLiteStore(blocking: true), access: Rules())
/// server.serve(notes, at: "notes/:id") { user, parameters in parameters.get("id") }
/// let router = Router(context: SyncRequestContext.self)
/// server.addRoutes(to: router)
/// let transport = InProcessTransport(router: router, server: server, clock: clock)
/// let endpoint = SyncEndpoint(server: URL(string: "http://notes.test")!, bearerToken: "ann", clock: clock, transport: transport)
/// let mine = endpoint.resource(at: "/notes/ann", as: [Note].self)
/// ```
///
/// To put faults between the two (latency, lost requests or answers, a server that crashes),
/// wrap it in a `SyncTransport` of your own that delays, drops or refuses before handing on.
/// A push socket it opens ends when the server closes it, or when the task that opened it is
/// cancelled.
public struct InProcessTransport: SyncTransport {
    private let http: InProcessHTTPClient
    private let openSocket: @Sendable (HTTPRequest, any Channel, Logger) async throws -> HTTPResponse.Status?
    /// The clock's time since the transport was made, and a sleep on it.
    private let now: @Sendable () -> Duration
    private let sleep: @Sendable (Duration) async throws -> Void
    private let logger: Logger
    /// How often, on the clock, an open push socket's event loop runs: its messages are handed
    /// on and its timers fire (the kit's session checks, a close's deadline).
    public var tick: Duration
    /// Whether the push sockets run on embedded channels, driven on the calling thread only.
    private let runsInSimulation: Bool

    /// The routes of `router` and the push sockets of `server`, on `clock`.
    ///
    /// - Parameters:
    ///   - router: The kit's routes (added with `server.addRoutes(to:)`) and the app's own.
    ///   - server: The sync server whose push sockets the app opens.
    ///   - clock: What the sockets' event loops run on (a `SimulationClock` in a simulation).
    ///   - tick: How often, on `clock`, an open socket's event loop runs (``tick``).
    ///   - runsInSimulation: Whether everything runs on one thread, as in a `Simulation`: the
    ///     push sockets are then NIO's embedded channels, whose event loops run on the calling
    ///     thread, so that a seed decides every step. Leave it `false` in a test whose tasks run
    ///     on several threads: the sockets are then NIO's thread-safe testing channels, which
    ///     the server writes to from any thread.
    ///   - logger: Where the requests and sockets log.
    public init<Access: AccessPolicy, C: Clock<Duration>>(
        router: Router<SyncRequestContext>, server: SyncServer<Access>, clock: C, tick: Duration = .milliseconds(100),
        runsInSimulation: Bool = false, logger: Logger = Logger(label: "stateloop.in-process")
    ) {
        self.runsInSimulation = runsInSimulation
        http = InProcessHTTPClient(router: router, logger: logger)
        openSocket = { head, channel, logger in try await server.openPushSocket(head, on: channel, logger: logger) }
        let origin = clock.now
        now = { origin.duration(to: clock.now) }
        sleep = { try await clock.sleep(for: $0) }
        self.tick = tick
        self.logger = logger
    }

    public func send(_ request: TransportRequest, limit: Int) async throws -> TransportResponse {
        let answer = try await http.send(request.method, Self.target(of: request.url), headers: request.headers, body: request.body)
        if (200...299).contains(answer.status), answer.body.count > limit {
            throw ResponseTooLargeError(limit: limit, declaredLength: answer.body.count)
        }
        return TransportResponse(status: answer.status, headers: answer.headers, body: answer.body)
    }

    public func openPush(
        _ request: TransportRequest, deadline: Duration, maximumMessageBytes: Int, opened: @escaping @Sendable () async -> Void,
        message: @escaping @Sendable (Result<String, PushDecodingError>) async -> Void
    ) async -> PushAttempt {
        let head = HTTPRequest(
            method: .get, scheme: "http", authority: "127.0.0.1", path: Self.target(of: request.url), headerFields: HTTPFields(request.headers))
        let frames = FrameGatherer(limit: maximumMessageBytes)
        if runsInSimulation {
            return await read(EmbeddedSocket(), head: head, frames: frames, opened: opened, message: message)
        }
        return await read(TestingSocket(), head: head, frames: frames, opened: opened, message: message)
    }

    /// Opens the server's socket for `head` on `socket`, then runs its event loop every tick and
    /// hands on its messages, until the server closes it or the task is cancelled (which closes
    /// it); the channel is finished before this returns.
    private func read(
        _ socket: some DrivenSocket, head: HTTPRequest, frames: FrameGatherer, opened: @Sendable () async -> Void,
        message: @escaping @Sendable (Result<String, PushDecodingError>) async -> Void
    ) async -> PushAttempt {
        var frames = frames
        // The kit asks the channel for its peer's address (one socket limit per address).
        await socket.connect(to: try! SocketAddress(ipAddress: "127.0.0.1", port: 9))
        if let failed = await open(head, on: socket.channel) {
            await socket.finish()
            return failed
        }
        await opened()
        var driven = now()
        var end: PushAttempt?
        reading: while true {
            let time = now()
            await socket.advance(by: time - driven)
            driven = time
            while let frame = await socket.nextFrame() {
                end = await frames.take(frame, message: message)
                if end != nil { break reading }
            }
            guard socket.isActive, (try? await sleep(tick)) != nil else { break reading }
        }
        // A message over the limit, or the task's end: the client closes its side.
        if end != .ended(failed: false) || socket.isActive { await socket.close() }
        await socket.finish()
        return end ?? .ended(failed: false)
    }

    /// Opens the server's socket for `head` on `channel`: `nil` once open, or how the attempt
    /// ended (refused, or unreachable when the server failed).
    private func open(_ head: HTTPRequest, on channel: any Channel) async -> PushAttempt? {
        do {
            return try await openSocket(head, channel, logger) == nil ? nil : .refused
        } catch {
            return .unreachable
        }
    }

    /// The request target of `url`: its path and query, as sent.
    private static func target(of url: URL) -> String {
        guard let components = URLComponents(url: url, resolvingAgainstBaseURL: false) else { return url.path }
        let path = components.percentEncodedPath.isEmpty ? "/" : components.percentEncodedPath
        return path + (components.percentEncodedQuery.map { "?" + $0 } ?? "")
    }
}

/// The messages of one socket, gathered from its frames.
private struct FrameGatherer {
    let limit: Int
    /// A message sent in several frames, gathered until its last.
    private var pending: (binary: Bool, bytes: [UInt8])?

    init(limit: Int) {
        self.limit = limit
    }

    /// Takes `frame`, handing a message it completes to `message`; the socket's end when the
    /// frame ends it (a close, or a message over the limit).
    mutating func take(
        _ frame: WebSocketFrame, message: @Sendable (Result<String, PushDecodingError>) async -> Void
    ) async -> PushAttempt? {
        switch frame.opcode {
        case .text, .binary:
            pending = (frame.opcode == .binary, [])
        case .continuation where pending != nil:
            break
        case .connectionClose:
            return .ended(failed: false)
        default:
            return nil
        }
        pending?.bytes += frame.unmaskedData.readableBytesView
        guard let gathered = pending else { return nil }
        if gathered.bytes.count > limit { return .ended(failed: true) }
        guard frame.fin else { return nil }
        pending = nil
        if gathered.binary {
            await message(.failure(PushDecodingError(problem: "a binary message, where JSON text was expected", message: "")))
        } else {
            await message(.success(String(decoding: gathered.bytes, as: UTF8.self)))
        }
        return nil
    }
}

/// A channel a push socket runs on, as ``InProcessTransport`` drives it: an embedded one in a
/// simulation, whose event loop runs on the calling thread, or one of NIO's thread-safe testing
/// channels otherwise.
private protocol DrivenSocket {
    /// The channel the server's socket is installed on.
    var channel: any Channel { get }
    /// Whether the socket is still open.
    var isActive: Bool { get }
    func connect(to address: SocketAddress) async
    /// Moves the event loop's time on by `duration` and runs what is due.
    func advance(by duration: Duration) async
    /// The next frame the server wrote, if any.
    func nextFrame() async -> WebSocketFrame?
    func close() async
    /// Ends the channel, closed or not.
    func finish() async
}

private struct EmbeddedSocket: DrivenSocket {
    let embedded = EmbeddedChannel()
    var channel: any Channel { embedded }
    var isActive: Bool { embedded.isActive }

    func connect(to address: SocketAddress) async {
        embedded.connect(to: address, promise: nil)
    }

    func advance(by duration: Duration) async {
        embedded.embeddedEventLoop.advanceTime(by: .nanoseconds(Int64(duration / .nanoseconds(1))))
        embedded.embeddedEventLoop.run()
    }

    func nextFrame() async -> WebSocketFrame? {
        try? embedded.readOutbound(as: WebSocketFrame.self)
    }

    func close() async {
        embedded.close(promise: nil)
        embedded.embeddedEventLoop.run()
    }

    func finish() async {
        _ = try? embedded.finish(acceptAlreadyClosed: true)
    }
}

private struct TestingSocket: DrivenSocket {
    let testing = NIOAsyncTestingChannel()
    var channel: any Channel { testing }
    var isActive: Bool { testing.isActive }

    func connect(to address: SocketAddress) async {
        try? await testing.connect(to: address)
    }

    func advance(by duration: Duration) async {
        await testing.testingEventLoop.advanceTime(by: .nanoseconds(Int64(duration / .nanoseconds(1))))
    }

    func nextFrame() async -> WebSocketFrame? {
        try? await testing.readOutbound(as: WebSocketFrame.self)
    }

    func close() async {
        try? await testing.close()
    }

    func finish() async {
        _ = try? await testing.finish(acceptAlreadyClosed: true)
    }
}
