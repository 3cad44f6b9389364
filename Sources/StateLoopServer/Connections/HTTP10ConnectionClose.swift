import NIOCore
import NIOHTTP1

/// Marks an HTTP/1.0 request that did not ask to keep its connection (and any request that
/// asked to close it) with `Connection: close`, before its head becomes an `HTTPRequest`.
///
/// Why: the HTTP types Hummingbird works with carry no version, so an HTTP/1.0 request read
/// as one that keeps its connection: it was answered, and its connection left open until the
/// idle timeout, where HTTP/1.0 closes it after the answer. With the header, Hummingbird closes
/// it as for any request that says so.
///
/// Threading: a channel handler, used only on its channel's event loop.
final class HTTP10ConnectionClose: ChannelInboundHandler, RemovableChannelHandler {
    typealias InboundIn = HTTPServerRequestPart
    typealias InboundOut = HTTPServerRequestPart

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        guard case .head(var head) = unwrapInboundIn(data), !head.isKeepAlive,
            !head.headers[canonicalForm: "connection"].contains(where: { $0.lowercased() == "close" })
        else {
            context.fireChannelRead(data)
            return
        }
        head.headers.replaceOrAdd(name: "Connection", value: "close")
        context.fireChannelRead(wrapInboundOut(.head(head)))
    }
}
