import Hummingbird
import NIOCore

/// The request context of a ``SyncServer``'s HTTP routes, the app's own among them: Hummingbird's
/// basic context plus the peer's address, which an app's sign-in route counts failures by
/// (see ``AttemptLimiter``), and the kit's JSON.
///
/// Its decoder and encoder make an app's routes answer as the kit's do:
/// `try await request.decode(as: Login.self, context: context)` reads at most the server's
/// ``SyncServerConfiguration/maximumBodyBytes`` and throws an ``ErrorResponse`` (413, 400)
/// answered with the kit's JSON error body (``SyncRequestDecoder``), and a returned
/// `ResponseEncodable` value is answered as JSON with sorted keys (``SyncResponseEncoder``).
public struct SyncRequestContext: RequestContext, RemoteAddressRequestContext {
    public var coreContext: CoreRequestContextStorage
    /// The address of the connection's peer, if the channel knows it.
    public let remoteAddress: SocketAddress?
    /// The largest request body the context's decoder reads: the server's
    /// ``SyncServerConfiguration/maximumBodyBytes``, set before any middleware or route sees the
    /// request (the configuration's default until then). A middleware may lower it for the
    /// routes behind it.
    public var maximumBodyBytes: Int

    /// A context for a request arriving on `source`'s channel.
    public init(source: ApplicationRequestContextSource) {
        coreContext = CoreRequestContextStorage(source: source)
        remoteAddress = source.channel.remoteAddress
        maximumBodyBytes = Self.defaultMaximumBodyBytes
    }

    /// The configuration's default limit, read once rather than for every request.
    private static let defaultMaximumBodyBytes = SyncServerConfiguration().maximumBodyBytes

    /// The peer's IP address, or `"unknown"` for a peer without one: a key to count by.
    public var peer: String {
        remoteAddress?.ipAddress ?? "unknown"
    }

    /// Hummingbird's limit for the bodies it collects for a request: the kit's,
    /// ``maximumBodyBytes``.
    public var maxUploadSize: Int {
        maximumBodyBytes
    }

    /// Decodes JSON bodies within ``maximumBodyBytes``, failing with the kit's errors.
    public var requestDecoder: SyncRequestDecoder {
        SyncRequestDecoder(maximumBodyBytes: maximumBodyBytes)
    }

    /// Encodes returned values as the kit's JSON, keys sorted.
    public var responseEncoder: SyncResponseEncoder {
        SyncResponseEncoder()
    }
}
