import Foundation
import HTTPTypes
import Hummingbird
import HummingbirdCore
import HummingbirdWebSocket
import Logging
import NIOCore
import NIOHTTP1

/// Who may talk to the inspector, beyond the token: a request must name the inspector by its
/// loopback address and port (`Host`), and a browser's request must come from the inspector's
/// own page (`Origin`).
///
/// The token alone is not enough on loopback: a web page elsewhere can make a browser send
/// requests to 127.0.0.1 (DNS rebinding points a name the page owns at it, and the browser then
/// counts the inspector as the page's own origin), so the `Host` the browser sends, which names
/// the page's site, is checked. A browser always says which page a request comes from
/// (`Origin`, an `http(s)://`, `null` or extension origin); Swift clients of the sockets send
/// none, or a `ws://` one (swift-websocket's client), which no browser sends.
struct InspectorGate: Sendable {
    /// Why a request is refused, each with its own status.
    enum Refusal: Error, Equatable {
        /// The `Host` header does not name the inspector's address and port (421).
        case wrongHost
        /// A browser request from a page other than the inspector's (403).
        case foreignOrigin
        /// The token is missing or wrong (401).
        case badToken

        var error: HTTPError {
            switch self {
            case .wrongHost:
                HTTPError(.misdirectedRequest, message: "the Host header does not name the inspector: use the address it printed at start")
            case .foreignOrigin:
                HTTPError(.forbidden, message: "requests from other pages are refused: open the page at the address the inspector printed")
            case .badToken:
                HTTPError(.unauthorized, message: "the inspector's token is missing or wrong: use the address it printed at start")
            }
        }
    }

    /// What the gate reads of a request; the same whether it comes from Hummingbird's request or
    /// from NIO's head of an upgrade.
    struct Credentials {
        var path: String
        var host: String?
        var origin: String?
        /// `?token=`, else an `Authorization: Bearer` header.
        var token: String?
    }

    /// The address the inspector binds (`Configuration.host`).
    let boundHost: String
    let token: String
    /// The bound port, once the server listens.
    let port: @Sendable () -> Int?

    /// The paths that answer WebSocket upgrades; both need the token.
    static let socketPaths: Set<String> = ["/app", "/page"]

    /// The authorities (`host:port`) a request may name: the loopback names, and the bound address
    /// itself (when it is not loopback, the owner chose to expose it).
    func authorities() -> [String]? {
        guard let port = port() else { return nil }
        let bound = boundHost.contains(":") ? "[\(boundHost)]" : boundHost
        var hosts = ["127.0.0.1", "localhost", "[::1]"]
        if !hosts.contains(bound.lowercased()) { hosts.append(bound.lowercased()) }
        return hosts.map { "\($0):\(port)" }
    }

    /// The authority of the request's `Host`, if it is one of ``authorities()``: what the page's
    /// Content-Security-Policy names for its socket.
    func authority(ofHost host: String?) -> String? {
        guard let host, let authorities = authorities() else { return nil }
        var named = host.lowercased()
        // A Host header leaves port 80 unsaid; an IPv6 address is bracketed, its colons inside.
        let hasPort = named.hasPrefix("[") ? named.contains("]:") : named.contains(":")
        if !hasPort { named += ":80" }
        return authorities.first { $0 == named }
    }

    /// Why `request` is refused, if it is: the wrong `Host` first (nothing else of a rebound
    /// request matters), then a foreign `Origin`, then the token when `needsToken`.
    func refusal(of request: Credentials, needsToken: Bool) -> Refusal? {
        guard authority(ofHost: request.host) != nil else { return .wrongHost }
        if let origin = request.origin, !originAllowed(origin, path: request.path) { return .foreignOrigin }
        if needsToken {
            guard let presented = request.token, Self.constantTimeEquals(presented, token) else { return .badToken }
        }
        return nil
    }

    /// An origin is allowed when it is the inspector's own page (`http://` and an authority it
    /// answers to); on the sockets, also when it is no web origin at all (`ws://…`, as
    /// swift-websocket's client sends: Swift apps, and Swift tools reading the page socket),
    /// since no browser page has one of those.
    private func originAllowed(_ origin: String, path: String) -> Bool {
        let origin = origin.lowercased()
        if let authorities = authorities(), authorities.contains(where: { origin == "http://\($0)" }) { return true }
        guard Self.socketPaths.contains(path) else { return false }
        let scheme = origin.split(separator: ":", maxSplits: 1).first.map(String.init) ?? ""
        return scheme == "ws" || scheme == "wss"
    }

    /// Compares without stopping at the first difference, so timing does not reveal a prefix.
    static func constantTimeEquals(_ a: String, _ b: String) -> Bool {
        let (a, b) = (Array(a.utf8), Array(b.utf8))
        guard a.count == b.count else { return false }
        return zip(a, b).reduce(0) { $0 | ($1.0 ^ $1.1) } == 0
    }

    /// The token a request presents: `?token=`, else `Authorization: Bearer`.
    static func presentedToken(query uri: URI, authorization: String?) -> String? {
        uri.queryParameters["token"].map(String.init) ?? authorization.flatMap { $0.hasPrefix("Bearer ") ? String($0.dropFirst(7)) : nil }
    }
}

extension InspectorGate.Credentials {
    /// Hummingbird's request.
    init(_ request: Request) {
        self.init(
            path: request.uri.path,
            // HTTPTypes carries an HTTP/1 `Host` as the request's authority.
            host: request.head.authority,
            origin: request.headers[.origin],
            token: InspectorGate.presentedToken(query: request.uri, authorization: request.headers[.authorization])
        )
    }

    /// NIO's head of a request, before Hummingbird sees it.
    init(_ head: HTTPRequestHead) {
        let uri = URI(head.uri)
        self.init(
            path: uri.path,
            host: head.headers.first(name: "host"),
            origin: head.headers.first(name: "origin"),
            token: InspectorGate.presentedToken(query: uri, authorization: head.headers.first(name: "authorization"))
        )
    }
}

/// Checks `Host` and `Origin` on every request (the token is each route's), and marks every
/// answer: `X-Content-Type-Options: nosniff`, and a Content-Security-Policy that lets a page run
/// only the inspector's own script and style and talk only to the inspector.
struct InspectorGateMiddleware<Context: RequestContext>: RouterMiddleware {
    let gate: InspectorGate

    func handle(_ request: Request, context: Context, next: (Request, Context) async throws -> Response) async throws -> Response {
        let credentials = InspectorGate.Credentials(request)
        var response: Response
        do {
            if let refusal = gate.refusal(of: credentials, needsToken: false) { throw refusal.error }
            response = try await next(request, context)
        } catch let error as HTTPError {
            response = try error.response(from: request, context: context)
        }
        response.headers[.xContentTypeOptions] = "nosniff"
        response.headers[.contentSecurityPolicy] = Self.contentSecurityPolicy(socketAuthority: gate.authority(ofHost: credentials.host))
        return response
    }

    /// Everything from the inspector itself, nothing inline (the page has no inline script,
    /// style or handler: keep it so), no framing, no `<base>`, no form posts; the page's socket
    /// named outright, since older browsers do not count `ws:` as 'self'. A request whose `Host`
    /// was refused gets no socket source at all.
    static func contentSecurityPolicy(socketAuthority: String?) -> String {
        let sockets = socketAuthority.map { " ws://\($0)" } ?? ""
        return [
            "default-src 'none'",
            "script-src 'self'",
            "style-src 'self'",
            "img-src 'self' data:",
            "connect-src 'self'\(sockets)",
            "frame-ancestors 'none'",
            "base-uri 'none'",
            "form-action 'none'",
        ].joined(separator: "; ")
    }
}

/// Hummingbird's HTTP/1 channel with WebSocket upgrades, with ``UpgradeGate`` before its
/// upgrade handler.
///
/// Hummingbird answers every upgrade its router refuses with a bare 400, whatever the router
/// threw. So a refused upgrade is turned into the plain request it would be without its
/// `Upgrade` header before the upgrade handler sees it: the router then answers it as any other
/// request, with the refusal's status (401, 403, 421) and its reason.
struct GatedWebSocketChannel: ServerChildChannel {
    let base: HTTP1WebSocketUpgradeChannel
    let gate: InspectorGate

    func setup(channel: any Channel, logger: Logger) -> EventLoopFuture<HTTP1WebSocketUpgradeChannel.Value> {
        let gate = gate
        return base.setup(channel: channel, logger: logger).flatMapThrowing { value in
            let operations = channel.pipeline.syncOperations
            let decoder = try operations.handler(type: ByteToMessageHandler<HTTPRequestDecoder>.self)
            try operations.addHandler(UpgradeGate(gate: gate), position: .after(decoder))
            return value
        }
    }

    func handle(value: HTTP1WebSocketUpgradeChannel.Value, logger: Logger) async {
        await base.handle(value: value, logger: logger)
    }
}

/// Between NIO's request decoder and its upgrade handler: strips `Upgrade` from a connection's
/// first request when the gate would refuse its upgrade, then leaves the pipeline (only the first
/// request of a connection can upgrade it, and after an upgrade no HTTP comes this way).
final class UpgradeGate: ChannelInboundHandler, RemovableChannelHandler {
    typealias InboundIn = HTTPServerRequestPart
    typealias InboundOut = HTTPServerRequestPart

    private let gate: InspectorGate

    init(gate: InspectorGate) {
        self.gate = gate
    }

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        guard case .head(var head) = unwrapInboundIn(data) else {
            context.fireChannelRead(data)
            return
        }
        if head.headers.contains(name: "upgrade") {
            let credentials = InspectorGate.Credentials(head)
            let accepted = InspectorGate.socketPaths.contains(credentials.path) && gate.refusal(of: credentials, needsToken: true) == nil
            if !accepted {
                head.headers.remove(name: "upgrade")
                head.headers.replaceOrAdd(name: "connection", value: "close")
            }
        }
        context.fireChannelRead(wrapInboundOut(.head(head)))
        context.pipeline.syncOperations.removeHandler(context: context, promise: nil)
    }
}
