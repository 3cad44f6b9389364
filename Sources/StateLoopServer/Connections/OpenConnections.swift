import NIOCore
import Synchronization

/// Every connection a sync server's applications accepted and have not closed yet, with the
/// port it came in on, so that a ``SyncHost`` stopping the server can close those still open
/// after the graceful shutdown, as the end of the server's process would.
///
/// Hummingbird's graceful shutdown can leave a connection open: one accepted by the listener but
/// not yet handed to a handler when the shutdown began (apple/swift-nio#3481), or one whose
/// request handler does not end when cancelled. A server that stops in a process that goes on
/// (tests, a restart in place) closes those too.
///
/// Threading: any thread; a connection registers on its event loop as it is set up.
final class OpenConnections: Sendable {
    private let channels = Mutex<[ObjectIdentifier: (port: Int?, channel: any Channel)]>([:])

    /// Keeps `channel` until it closes: until then, not when its handlers go (a push socket's
    /// upgrade removes the HTTP handlers from a connection that stays open).
    func register(_ channel: any Channel) {
        let id = ObjectIdentifier(channel)
        let port = channel.localAddress?.port
        channels.withLock { $0[id] = (port, channel) }
        channel.closeFuture.whenComplete { [weak self] _ in
            self?.channels.withLock { _ = $0.removeValue(forKey: id) }
        }
    }

    /// Closes every connection still open that came in on `port`, and returns once each is
    /// closed: its handlers have seen it end (a push socket has left the server's count).
    func closeAll(onPort port: Int) async {
        let open = channels.withLock { channels in
            channels.values.filter { $0.port == port }.map(\.channel)
        }
        for channel in open {
            channel.close(promise: nil)
        }
        for channel in open {
            try? await channel.closeFuture.get()
        }
    }

    /// How many connections are open now.
    var count: Int {
        channels.withLock { $0.count }
    }
}
