import Hummingbird
import HummingbirdCore
import Logging
import NIOCore
import ServiceLifecycle

extension SyncServer {
    /// A Hummingbird application serving the declared resources and mutations on `host:port`,
    /// with `routes` for the app's own (a login, say), and `middleware` in front of every route,
    /// the kit's included (a request log, say: add it with `router.add(middleware:)`). Run it
    /// with a ``SyncHost`` (`.init(server, application: server.application(port: port))`), or in
    /// a `ServiceGroup` of your own before the server itself:
    /// `ServiceGroup(services: [server.application(...), server], …)`. It is Hummingbird's own
    /// `Application`: add services to it (`addServices`) or work to do before it listens
    /// (`beforeServerStarts`), or test it with HummingbirdTesting.
    ///
    /// HTTP connections that stay idle for `idleTimeout` between requests are closed (push
    /// sockets are watched by the slow-reader timeout and, for a peer that vanished, by TCP
    /// keepalive: see ``SyncServerConfiguration/deadPeerTimeout``); WebSocket frames larger than
    /// the configuration's `maximumFrameBytes` close their socket with code 1009. At `maximumConnections` open
    /// connections the server stops accepting until one closes (new ones wait in the
    /// listener's backlog), so running out of file descriptors degrades service, nothing else.
    /// Every request head must arrive within `requestHeadTimeout` from its first byte (the first
    /// one's from the connection's start) and within `maximumHeadBytes` (431, 408 late), start
    /// with an HTTP/1 request line and have only `name: value` header lines (400); every request
    /// body must arrive whole within `requestBodyTimeout` from the end of its head (408); each
    /// is answered and closed. One peer address holds at most `maximumConnectionsPerAddress`
    /// connections (`nil`, the default, is half of `maximumConnections`; pass
    /// `maximumConnections` for no share); past it a new one is answered 503 and closed, so
    /// that one client cannot take every connection. Once its graceful shutdown begins, a connection with no request
    /// head yet (and any accepted from then on) is answered 503 and closed at once, so that
    /// clients reconnecting as the server stops do not hold the shutdown open.
    public func application(
        host: String = "127.0.0.1",
        port: Int = 8080,
        idleTimeout: Duration = .seconds(60),
        requestHeadTimeout: Duration = .seconds(10),
        requestBodyTimeout: Duration = .seconds(30),
        maximumHeadBytes: Int = 16_384,
        maximumConnections: Int = 10_000,
        maximumConnectionsPerAddress: Int? = nil,
        additionalChannelHandlers: @escaping @Sendable () -> [any RemovableChannelHandler] = { [] },
        middleware: (Router<SyncRequestContext>) -> Void = { _ in },
        routes: (Router<SyncRequestContext>) -> Void = { _ in },
        onServerRunning: @escaping @Sendable (any Channel) async -> Void = { _ in }
    ) -> Application<RouterResponder<SyncRequestContext>> {
        let router = Router(context: SyncRequestContext.self)
        // First, so that the app's middleware sees the server's body limit too.
        addBodyLimit(to: router)
        middleware(router)
        let table = addKitRoutes(to: router)
        routes(router)
        // The app's routes answer 405 with `Allow` for their other methods too.
        table.learn(router)
        let sockets = Router(context: PushRequestContext.self)
        addPushRoutes(to: sockets)
        let pushResponder = sockets.buildResponder()
        let http1 = HTTP1Channel.Configuration(
            additionalChannelHandlers: additionalChannelHandlers(),
            idleTimeout: TimeAmount(idleTimeout)
        )
        let headTimeout = TimeAmount(requestHeadTimeout)
        let bodyTimeout = TimeAmount(requestBodyTimeout)
        let shares = AddressShares(limit: maximumConnectionsPerAddress ?? max(1, maximumConnections / 2))
        let tuning = ConnectionTuning(deadPeerTimeout: configuration.deadPeerTimeout)
        let maximumFrameBytes = configuration.maximumFrameBytes
        let connections = connections
        return Application(
            router: router,
            server: HTTPServerBuilder { responder in
                HeadGuardedChannel(
                    base: PushUpgradeChannel(responder: responder, http1: http1, maximumFrameBytes: maximumFrameBytes) { head, channel, logger in
                        await self.decideUpgrade(of: head, on: channel, logger: logger, with: pushResponder)
                    },
                    timeout: headTimeout,
                    bodyTimeout: bodyTimeout,
                    maximumBytes: maximumHeadBytes,
                    tuning: tuning,
                    shares: shares,
                    connections: connections
                )
            },
            configuration: ApplicationConfiguration(
                address: .hostname(host, port: port),
                availableConnectionsDelegate: MaximumAvailableConnections(maximumConnections)
            ),
            onServerRunning: onServerRunning,
            logger: logger
        )
    }
}
