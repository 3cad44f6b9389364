import Hummingbird
import NIOCore

/// The request context of a ``SyncServer``'s HTTP routes, the app's own among them: Hummingbird's
/// basic context plus the peer's address, which an app's sign-in route counts failures by
/// (see ``AttemptLimiter``).
public struct SyncRequestContext: RequestContext, RemoteAddressRequestContext {
    public var coreContext: CoreRequestContextStorage
    /// The address of the connection's peer, if the channel knows it.
    public let remoteAddress: SocketAddress?

    /// A context for a request arriving on `source`'s channel.
    public init(source: ApplicationRequestContextSource) {
        coreContext = CoreRequestContextStorage(source: source)
        remoteAddress = source.channel.remoteAddress
    }

    /// The peer's IP address, or `"unknown"` for a peer without one: a key to count by.
    public var peer: String {
        remoteAddress?.ipAddress ?? "unknown"
    }
}
