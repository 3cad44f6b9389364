import Foundation
import HTTPTypes
import Hummingbird
import HummingbirdWebSocket
import Logging
import ServiceLifecycle
import StateLoopInspectorWire
import Synchronization

/// The inspector: a server on loopback that apps send their sessions to and that serves the
/// page showing them (see `docs/Inspector.md`).
///
/// Every request needs the token (`?token=` or `Authorization: Bearer`), but the page's
/// script and style, which hold no data. It is random unless given, and printed by
/// `stateloop-inspector` at start.
///
/// Threading: every member may be called from any isolation; the sockets' tasks share the
/// ``InspectorHub``.
public final class InspectorServer: Sendable {
    /// Where it listens, its token, and how much it keeps.
    public struct Configuration: Sendable {
        /// The address to bind; loopback unless you mean to expose the sessions.
        public var host: String
        /// The port; 0 for any free one.
        public var port: Int
        /// The token apps and pages must present.
        public var token: String
        /// How many records are kept per app; the oldest go first.
        public var recordsPerApp: Int

        public init(host: String = "127.0.0.1", port: Int = 7_357, token: String = InspectorServer.randomToken(), recordsPerApp: Int = 100_000) {
            self.host = host
            self.port = port
            self.token = token
            self.recordsPerApp = recordsPerApp
        }
    }

    public let configuration: Configuration
    let hub: InspectorHub
    private let logger: Logger
    private let lifecycle = Mutex<Lifecycle>(Lifecycle())
    private let page: PageFiles

    private struct Lifecycle {
        var services: ServiceGroup?
        var task: Task<Void, any Error>?
        var port: Int?
    }

    /// - Throws: when the page's files are missing from the bundle (a broken build).
    public init(configuration: Configuration = Configuration(), logger: Logger = Logger(label: "stateloop.inspector")) throws {
        self.configuration = configuration
        self.logger = logger
        hub = InspectorHub(capacity: configuration.recordsPerApp)
        page = try PageFiles()
    }

    /// A token of 32 random hexadecimal digits.
    public static func randomToken() -> String {
        var generator = SystemRandomNumberGenerator()
        return (0..<4).map { _ in String(format: "%016llx", generator.next() as UInt64) }.joined()
    }

    /// The bound port while running.
    public var port: Int? {
        lifecycle.withLock { $0.port }
    }

    /// The page's address, token included, while running.
    public var pageURL: String? {
        address(scheme: "http", path: "/")
    }

    /// The address an app connects to (`Inspector.connect(to:)`), while running.
    public var appURL: String? {
        address(scheme: "ws", path: "/app")
    }

    /// `scheme://host:port/path?token=…`, the host bracketed when it is an IPv6 address and the
    /// token escaped.
    private func address(scheme: String, path: String) -> String? {
        guard let port else { return nil }
        let host = configuration.host.contains(":") ? "[\(configuration.host)]" : configuration.host
        var allowed = CharacterSet.alphanumerics
        allowed.insert(charactersIn: "-._~")
        let token = configuration.token.addingPercentEncoding(withAllowedCharacters: allowed) ?? configuration.token
        return "\(scheme)://\(host):\(port)\(path)?token=\(token)"
    }

    /// Binds and serves in the background; returns the bound port once it accepts connections.
    @discardableResult
    public func start() async throws -> Int {
        let (ready, readyContinuation) = AsyncStream.makeStream(of: Int.self)
        let application = makeApplication { readyContinuation.yield($0) }
        var group = ServiceGroupConfiguration(services: [application], logger: logger)
        // A page or app that does not answer the close must not hold the stop.
        group.maximumGracefulShutdownDuration = .seconds(2)
        let services = ServiceGroup(configuration: group)
        let claimed = lifecycle.withLock { lifecycle in
            guard lifecycle.services == nil else { return false }
            lifecycle.services = services
            return true
        }
        guard claimed else { throw StartFailure(description: "the inspector is already running") }
        let task = Task {
            defer { readyContinuation.finish() }
            try await services.run()
        }
        lifecycle.withLock { $0.task = task }
        for await port in ready {
            lifecycle.withLock { $0.port = port }
            return port
        }
        // Cancelled while binding, or the server ended: stop what may still run, then say why.
        await services.triggerGracefulShutdown()
        lifecycle.withLock { $0 = Lifecycle() }
        try await task.value
        try Task.checkCancellation()
        throw StartFailure(description: "the inspector stopped before listening")
    }

    /// Closes every socket and stops; returns once the server is down.
    public func stop() async {
        let running = lifecycle.withLock { lifecycle in
            defer { lifecycle = Lifecycle() }
            return lifecycle
        }
        guard let services = running.services else { return }
        hub.closeAll()
        await services.triggerGracefulShutdown()
        _ = try? await running.task?.value
    }

    /// Why ``start()`` failed.
    public struct StartFailure: Error, CustomStringConvertible {
        public let description: String
    }

    // MARK: Routes

    private func makeApplication(onRunning: @escaping @Sendable (Int) -> Void) -> some Service {
        let router = Router(context: BasicWebSocketRequestContext.self)
        router.get("/") { [self] request, _ in
            try authorize(request)
            return page.response(for: .index)
        }
        router.get("/inspector.js") { [page] _, _ in page.response(for: .script) }
        router.get("/inspector.css") { [page] _, _ in page.response(for: .style) }
        router.get("/apps") { [self] request, _ in
            try authorize(request)
            return Response(status: .ok, headers: [.contentType: "application/json"], body: .init(byteBuffer: .init(string: InspectorHub.text(hub.apps))))
        }
        router.ws("/app", shouldUpgrade: { [self] request, _ in try authorize(request); return .upgrade([:]) }) { [self] inbound, outbound, _ in
            try await AppSocket(hub: hub, logger: logger).run(inbound: inbound, outbound: outbound)
        }
        router.ws("/page", shouldUpgrade: { [self] request, _ in try authorize(request); return .upgrade([:]) }) { [self] inbound, outbound, _ in
            try await PageSocket(hub: hub).run(inbound: inbound, outbound: outbound)
        }
        return Application(
            router: router,
            server: .http1WebSocketUpgrade(webSocketRouter: router, configuration: .init(ws: .init(maxFrameSize: InspectorSockets.maximumFrameBytes))),
            configuration: .init(address: .hostname(configuration.host, port: configuration.port), serverName: "stateloop-inspector"),
            onServerRunning: { channel in onRunning(channel.localAddress?.port ?? 0) },
            logger: logger
        )
    }

    /// Throws 401 unless the request carries the token.
    private func authorize(_ request: Request) throws {
        let presented = request.uri.queryParameters["token"].map(String.init)
            ?? request.headers[.authorization].flatMap { $0.hasPrefix("Bearer ") ? String($0.dropFirst(7)) : nil }
        guard let presented, Self.constantTimeEquals(presented, configuration.token) else {
            throw HTTPError(.unauthorized, message: "the inspector's token is missing or wrong: use the address it printed at start")
        }
    }

    /// Compares without stopping at the first difference, so timing does not reveal a prefix.
    private static func constantTimeEquals(_ a: String, _ b: String) -> Bool {
        let (a, b) = (Array(a.utf8), Array(b.utf8))
        guard a.count == b.count else { return false }
        return zip(a, b).reduce(0) { $0 | ($1.0 ^ $1.1) } == 0
    }
}
