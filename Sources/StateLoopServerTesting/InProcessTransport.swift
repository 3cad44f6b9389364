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
        var fields = HTTPFields()
        for (name, value) in request.headers {
            if let name = HTTPField.Name(name) { fields[name] = value }
        }
        let head = HTTPRequest(method: .get, scheme: "http", authority: "127.0.0.1", path: Self.target(of: request.url), headerFields: fields)
        // The kit asks the channel for its peer's address (one socket limit per address).
        let peer = try! SocketAddress(ipAddress: "127.0.0.1", port: 9)
        var frames = FrameGatherer(limit: maximumMessageBytes)
        if runsInSimulation {
            let channel = EmbeddedChannel()
            defer { _ = try? channel.finish(acceptAlreadyClosed: true) }
            channel.connect(to: peer, promise: nil)
            switch await open(head, on: channel) {
            case .refused?: return .refused
            case .unreachable?: return .unreachable
            default: break
            }
            await opened()
            let loop = channel.embeddedEventLoop
            var driven = now()
            while true {
                let time = now()
                loop.advanceTime(by: .nanoseconds(Int64((time - driven) / .nanoseconds(1))))
                driven = time
                loop.run()
                while let frame = try? channel.readOutbound(as: WebSocketFrame.self) {
                    if let end = await frames.take(frame, message: message) {
                        if end == .ended(failed: true) { channel.close(promise: nil) }
                        return end
                    }
                }
                guard channel.isActive else { return .ended(failed: false) }
                guard (try? await sleep(tick)) != nil else {
                    channel.close(promise: nil)
                    loop.run()
                    return .ended(failed: false)
                }
            }
        } else {
            let channel = NIOAsyncTestingChannel()
            try? await channel.connect(to: peer)
            if let failed = await open(head, on: channel) {
                _ = try? await channel.finish(acceptAlreadyClosed: true)
                return failed
            }
            await opened()
            let loop = channel.testingEventLoop
            var driven = now()
            var end: PushAttempt?
            reading: while true {
                let time = now()
                await loop.advanceTime(by: .nanoseconds(Int64((time - driven) / .nanoseconds(1))))
                driven = time
                while let frame = try? await channel.readOutbound(as: WebSocketFrame.self) {
                    end = await frames.take(frame, message: message)
                    if end != nil { break reading }
                }
                guard channel.isActive else { break reading }
                guard (try? await sleep(tick)) != nil else { break reading }
            }
            if end != .ended(failed: false) || channel.isActive { try? await channel.close() }
            _ = try? await channel.finish(acceptAlreadyClosed: true)
            return end ?? .ended(failed: false)
        }
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
