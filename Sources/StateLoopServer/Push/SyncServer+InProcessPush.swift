import HTTPTypes
import Hummingbird
import Logging
import NIOCore

extension SyncServer {
    /// Opens a push socket for `head` on `channel` as the push routes open one over a
    /// connection: the same decision (principal, access, the sockets a principal may hold) and
    /// the same socket in the channel's pipeline, without the HTTP upgrade's bytes. For
    /// StateLoopServerTesting's in-process transport, whose channels are NIO's testing ones:
    /// frames are written to the channel as `WebSocketFrame`s.
    ///
    /// - Returns: `nil` once the socket is open, or the refusal's status.
    package func openPushSocket(_ head: HTTPRequest, on channel: any Channel, logger: Logger) async throws -> HTTPResponse.Status? {
        let sockets = Router(context: PushRequestContext.self)
        addPushRoutes(to: sockets)
        switch await decideUpgrade(of: head, on: channel, logger: logger, with: sockets.buildResponder()) {
        case .upgrade(let install):
            if channel.eventLoop.inEventLoop {
                try install(channel)
            } else {
                try await channel.eventLoop.submit { try install(channel) }.get()
            }
            return nil
        case .refuse(let status, _, _):
            return status
        }
    }
}
