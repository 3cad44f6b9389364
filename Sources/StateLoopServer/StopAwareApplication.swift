import Hummingbird
import ServiceLifecycle

/// The Hummingbird application that ``SyncServer/application(host:port:idleTimeout:requestHeadTimeout:requestBodyTimeout:maximumHeadBytes:maximumConnections:maximumConnectionsPerAddress:additionalChannelHandlers:middleware:routes:onServerRunning:)``
/// returns: the application itself, and a signal raised as its graceful shutdown begins, before
/// Hummingbird's own handlers run (handlers run in the order they were registered, and this one
/// is registered first), so that no connection accepted during the shutdown waits for its
/// request head's deadline.
struct StopAwareApplication<Base: ApplicationProtocol>: Service {
    let base: Base
    let stopping: OnceFlag

    func run() async throws {
        try await withGracefulShutdownHandler {
            try await base.run()
        } onGracefulShutdown: {
            stopping.raise()
        }
    }
}
