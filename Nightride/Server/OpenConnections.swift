import NIOCore
import Synchronization

/// Every connection the server accepted and has not closed yet, so that `stop()` can close
/// them all, as the end of a server process would.
///
/// Hummingbird's graceful shutdown leaves one kind of connection open: one accepted by the
/// listener but not yet handed to a handler when the shutdown began (apple/swift-nio#3481).
/// Its request is never answered and its client waits for its own timeout. A server that
/// stops in a process that goes on (tests, `restart()`) must close those too.
final class OpenConnections: Sendable {
    private let channels = Mutex<[ObjectIdentifier: any Channel]>([:])

    /// A handler for the connection's pipeline that registers it until it closes.
    func tracker() -> any RemovableChannelHandler {
        Tracker(connections: self)
    }

    /// Closes every connection still open, and returns once each is closed: its handlers have
    /// seen it end (a push socket has left the sync server's count).
    func closeAll() async {
        let open = channels.withLock { channels in
            defer { channels = [:] }
            return Array(channels.values)
        }
        for channel in open {
            channel.close(promise: nil)
        }
        for channel in open {
            try? await channel.closeFuture.get()
        }
    }

    fileprivate func register(_ channel: any Channel) {
        let id = ObjectIdentifier(channel)
        channels.withLock { $0[id] = channel }
        // Unregistered when it closes, not when the handler goes: a WebSocket upgrade removes
        // the HTTP handlers, this one among them, from a connection that stays open.
        channel.closeFuture.whenComplete { [weak self] _ in
            self?.channels.withLock { _ = $0.removeValue(forKey: id) }
        }
    }

    /// Passes everything through; only registers its channel.
    private final class Tracker: ChannelInboundHandler, RemovableChannelHandler {
        typealias InboundIn = NIOAny
        let connections: OpenConnections

        init(connections: OpenConnections) {
            self.connections = connections
        }

        func handlerAdded(context: ChannelHandlerContext) {
            connections.register(context.channel)
        }
    }
}
