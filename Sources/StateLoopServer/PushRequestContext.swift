import Hummingbird
import HummingbirdWebSocket
import NIOCore

/// The request context of push routes: Hummingbird's WebSocket context plus the connection's
/// channel, which the kit closes itself when a socket stops reading (a close frame could not
/// get through the full buffers, and the reader would keep the connection open), and what the
/// upgrade's decision hands to the socket.
public struct PushRequestContext: RequestContext, WebSocketRequestContext {
    public var coreContext: CoreRequestContextStorage
    public let webSocket: WebSocketHandlerReference<Self>
    let channel: any Channel
    let handOver = UpgradeHandOver()

    /// A context for a request arriving on `source`'s channel.
    public init(source: ApplicationRequestContextSource) {
        coreContext = CoreRequestContextStorage(source: source)
        webSocket = WebSocketHandlerReference()
        channel = source.channel
    }
}
