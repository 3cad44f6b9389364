import Hummingbird
import NIOCore

/// The request context of Nightride's HTTP routes: Hummingbird's basic context plus the peer's
/// address, which the login's limits count failures by.
struct NightrideRequestContext: RequestContext, RemoteAddressRequestContext {
    var coreContext: CoreRequestContextStorage
    let remoteAddress: SocketAddress?

    init(source: ApplicationRequestContextSource) {
        coreContext = CoreRequestContextStorage(source: source)
        remoteAddress = source.channel.remoteAddress
    }

    /// The peer's IP address, or a single key for peers without one.
    var peer: String {
        remoteAddress?.ipAddress ?? "unknown"
    }
}
