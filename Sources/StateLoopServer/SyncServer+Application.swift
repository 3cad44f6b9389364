import Hummingbird
import HummingbirdCore
import HummingbirdWebSocket
import Logging
import NIOCore

extension SyncServer {
    /// A Hummingbird application serving the declared resources and mutations on `host:port`,
    /// with `routes` for the app's own (a login, say). Run it in a `ServiceGroup` before the
    /// server itself: `ServiceGroup(services: [server.application(...), server], …)`.
    ///
    /// HTTP connections that stay idle for `idleTimeout` between requests are closed (push
    /// sockets are watched by the slow-reader timeout and WebSocket pings instead); WebSocket frames larger than the configuration's
    /// `maximumFrameBytes` close their socket with code 1009. At `maximumConnections` open
    /// connections the server stops accepting until one closes (new ones wait in the
    /// listener's backlog), so running out of file descriptors degrades service, nothing else.
    public func application(
        host: String = "127.0.0.1",
        port: Int = 8080,
        idleTimeout: Duration = .seconds(60),
        maximumConnections: Int = 10_000,
        additionalChannelHandlers: @escaping @Sendable () -> [any RemovableChannelHandler] = { [] },
        routes: (Router<BasicRequestContext>) -> Void = { _ in },
        onServerRunning: @escaping @Sendable (any Channel) async -> Void = { _ in }
    ) -> some ApplicationProtocol {
        let router = Router()
        addRoutes(to: router)
        routes(router)
        let sockets = Router(context: PushRequestContext.self)
        addPushRoutes(to: sockets)
        let http1 = HTTP1Channel.Configuration(
            additionalChannelHandlers: additionalChannelHandlers(),
            idleTimeout: .nanoseconds(Int64(idleTimeout / .nanoseconds(1)))
        )
        return Application(
            router: router,
            server: .http1WebSocketUpgrade(
                webSocketRouter: sockets,
                configuration: .init(http1: http1, ws: .init(maxFrameSize: configuration.maximumFrameBytes))
            ),
            configuration: ApplicationConfiguration(
                address: .hostname(host, port: port),
                availableConnectionsDelegate: MaximumAvailableConnections(maximumConnections)
            ),
            onServerRunning: onServerRunning,
            logger: logger
        )
    }
}
