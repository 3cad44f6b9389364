import Foundation
import HTTPTypes
import Hummingbird
import HummingbirdCore
import HummingbirdWebSocket
import Logging
import ServiceLifecycle
import StateLoopInspectorWire
import Synchronization

/// The inspector: a server on loopback that apps send their sessions to and that serves the
/// page showing them (see StateLoopInspector's article “The inspector”).
///
/// Every request needs the token (`?token=` or `Authorization: Bearer`), but the page's
/// script and style, which hold no data. It is random unless given, and printed by
/// `stateloop-inspector` at start. Every request must also name the inspector in its `Host`
/// (`127.0.0.1:PORT`, `localhost:PORT`, `[::1]:PORT`, or the bound address), or it is refused
/// with 421: a page elsewhere cannot reach it through a name of its own (DNS rebinding). A
/// browser's request from a page other than the inspector's own (`Origin`) is refused with 403.
/// Refused WebSocket upgrades get these statuses too, with the reason as JSON.
///
/// Threading: every member may be called from any isolation; the sockets' tasks share the
/// `InspectorHub`.
public final class InspectorServer: Sendable {
    /// Where it listens, its token, and how much it keeps.
    public struct Configuration: Sendable {
        /// The address to bind; loopback unless you mean to expose the sessions. Requests may
        /// name it in their `Host`, besides the loopback names.
        public var host: String
        /// The port; 0 for any free one.
        public var port: Int
        /// The token apps and pages must present.
        public var token: String
        /// How many records are kept per app; the oldest go first.
        public var recordsPerApp: Int

        /// Loopback on the inspector's usual port, a random token, 100,000 records per app.
        public init(host: String = "127.0.0.1", port: Int = 7_357, token: String = InspectorServer.randomToken(), recordsPerApp: Int = 100_000) {
            self.host = host
            self.port = port
            self.token = token
            self.recordsPerApp = recordsPerApp
        }
    }

    /// Where it listens (the port asked for: see ``port`` for the bound one) and its token.
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

    /// A token of 64 random hexadecimal digits.
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
        let application = makeApplication { [self] port in
            // Known before the first request is read: the gate checks `Host` against it.
            lifecycle.withLock { $0.port = port }
            readyContinuation.yield(port)
        }
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
        /// What went wrong.
        public let description: String
    }

    // MARK: Routes

    private func makeApplication(onRunning: @escaping @Sendable (Int) -> Void) -> some Service {
        let router = Router(context: BasicWebSocketRequestContext.self)
        // Before every route: a middleware only wraps the routes added after it.
        router.add(middleware: InspectorGateMiddleware(gate: gate))
        router.get("/") { [self] request, _ in
            // A browser sent to the page without its token gets a page that says how to get in,
            // not the JSON refusal a client of the sockets reads.
            if let refusal = gate.refusal(of: InspectorGate.Credentials(request), needsToken: true) {
                guard refusal == .badToken else { throw refusal.error }
                return Self.tokenNeeded
            }
            return page.response(for: .index)
        }
        router.get("/inspector.js") { [page] _, _ in page.response(for: .script) }
        router.get("/inspector.css") { [page] _, _ in page.response(for: .style) }
        router.get("/apps") { [self] request, _ in
            try authorize(request)
            return Response(
                status: .ok, headers: [.contentType: "application/json"], body: .init(byteBuffer: .init(string: InspectorHub.text(hub.apps))))
        }
        router.ws(
            "/app",
            shouldUpgrade: { [self] request, _ in
                try authorize(request)
                return .upgrade([:])
            }
        ) { [self] inbound, outbound, _ in
            try await AppSocket(hub: hub, logger: logger).run(inbound: inbound, outbound: outbound)
        }
        router.ws(
            "/page",
            shouldUpgrade: { [self] request, _ in
                try authorize(request)
                return .upgrade([:])
            }
        ) { [self] inbound, outbound, _ in
            try await PageSocket(hub: hub).run(inbound: inbound, outbound: outbound)
        }
        // The same router decides upgrades: the gate and the token are checked once more there.
        let webSocketResponder = router.buildResponder()
        return Application(
            router: router,
            server: HTTPServerBuilder { [gate] responder in
                GatedWebSocketChannel(
                    base: HTTP1WebSocketUpgradeChannel(
                        responder: responder,
                        webSocketResponder: webSocketResponder,
                        configuration: .init(ws: .init(maxFrameSize: InspectorSockets.maximumFrameBytes))
                    ),
                    gate: gate
                )
            },
            configuration: .init(address: .hostname(configuration.host, port: configuration.port), serverName: "stateloop-inspector"),
            onServerRunning: { channel in onRunning(channel.localAddress?.port ?? 0) },
            logger: logger
        )
    }

    /// The page for a browser that came without the token (401): how to get in.
    private static let tokenNeeded = Response(
        status: .unauthorized,
        headers: [.contentType: "text/html; charset=utf-8", .cacheControl: "no-store"],
        body: .init(
            byteBuffer: .init(
                string: """
                    <!doctype html>
                    <html lang="en"><head><meta charset="utf-8"><title>StateLoop inspector: token needed</title></head>
                    <body>
                    <h1>StateLoop inspector</h1>
                    <p>This page needs the inspector's token, which its address carries: <code>/?token=…</code>.</p>
                    <p>Open the page address the inspector printed when it started. To see it again, stop the
                    inspector and run <code>swift run stateloop-inspector</code>: it keeps its token in your data folder
                    (<code>~/.local/share/stateloop/inspector-token</code> on Linux), so the address stays the same (the token is that file's one line), and
                    the apps it talked to connect again by themselves.</p>
                    </body></html>
                    """))
    )

    /// Throws 401 unless the request carries the token (and the gate's refusal, should the
    /// middleware have been bypassed).
    private func authorize(_ request: Request) throws {
        if let refusal = gate.refusal(of: InspectorGate.Credentials(request), needsToken: true) { throw refusal.error }
    }

    /// The checks every request passes: `Host`, `Origin`, the token.
    private var gate: InspectorGate {
        InspectorGate(boundHost: configuration.host, token: configuration.token, port: { [self] in port })
    }
}
