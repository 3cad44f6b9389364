import AsyncHTTPClient
import Foundation
import Logging
import StateLoopSync

/// A StateLoop server as one session of an app talks to it: its address, the headers every
/// request carries (the session's bearer token), and how resources on it are kept up to date.
/// It builds what a resource needs in one call, the way a server built on StateLoopServer
/// serves it: a pull with `GET <path>`, a push socket on `<path>/push`, connectivity from that
/// socket, and the resource's `Client-ID` on both, so that every value says which of its own
/// mutations it contains; for a writable resource, the queue of optimistic mutations and its
/// sender, `POST <path>` with each mutation's `Mutation-ID`.
///
/// ```swift
/// let server = SyncEndpoint(server: URL(string: "http://127.0.0.1:8080")!, bearerToken: token)
/// let board = server.resource(at: "/board", as: [Note].self)
/// let notes = server.optimisticResource(at: "/me/notes", for: AddNote.self, store: journal.mutationStore(named: "notes", for: AddNote.self))
/// notes.mutate(AddNote(text: "milk"))          // shown at once, sent in order, once
/// let places: [Place] = try await server.get("/places?q=gare")
/// ```
///
/// A resource it makes is the app's to stop (`RemoteResource.stop()`,
/// `OptimisticResource.stop()`, which stops its resource too). Nothing is shared between two
/// resources: each has its own client id, pull, push socket and connectivity.
public struct SyncEndpoint: Sendable {
    /// The server, `http://host:port` (or `https`), with a path prefix if the app's routes
    /// live under one.
    public let server: URL
    /// The headers every request and push upgrade carries.
    public var headers: [String: String]
    /// Retries, polling, the slow signal and request deadlines of every resource it makes.
    public var policy: ResourcePolicy
    /// The first wait before a push socket connects again; it doubles after each failed
    /// attempt, up to four times this.
    public var reconnectBackoff: Duration
    /// The clock of every timer of the resources it makes.
    public var clock: any Clock<Duration>
    /// Where the push sockets log what goes wrong with their connections.
    public var logger: Logger
    /// The largest answer accepted, in bytes (see ``ResponseTooLargeError``).
    public var maximumResponseBytes: Int
    /// The HTTP client to send with; `nil` shares one client for the process. Unused when the
    /// endpoint was given a transport of its own.
    public var client: HTTPClient?
    /// The transport given at its creation, if any.
    private let customTransport: (any SyncTransport)?

    /// What carries its requests and push sockets: the one it was given, or the network
    /// (``NetworkTransport``) with ``client`` and ``logger``.
    public var transport: any SyncTransport {
        customTransport ?? NetworkTransport(client: client, logger: logger)
    }

    /// The server at `server`, as the session whose token is `bearerToken` (sent as
    /// `Authorization: Bearer <token>`), with extra `headers`, reached over `transport` (`nil`:
    /// the network).
    public init(
        server: URL,
        bearerToken: String? = nil,
        headers: [String: String] = [:],
        policy: ResourcePolicy = ResourcePolicy(),
        reconnectBackoff: Duration = .milliseconds(250),
        clock: any Clock<Duration> = ContinuousClock(),
        logger: Logger = Logger(label: "StateLoopSync.endpoint"),
        maximumResponseBytes: Int = 4 << 20,
        client: HTTPClient? = nil,
        transport: (any SyncTransport)? = nil
    ) {
        customTransport = transport
        self.server = server
        var headers = headers
        if let bearerToken { headers["Authorization"] = "Bearer \(bearerToken)" }
        self.headers = headers
        self.policy = policy
        self.reconnectBackoff = reconnectBackoff
        self.clock = clock
        self.logger = logger
        self.maximumResponseBytes = maximumResponseBytes
        self.client = client
    }

    // MARK: Resources

    /// A resource at `path` (`/me/ride`): pulled with `GET`, pushed on `<path>/push` (or
    /// `pushPath`), online while its push socket is connected, under `clientID`.
    ///
    /// - Parameters:
    ///   - path: The resource's path on the server, one of the app's own.
    ///   - type: The type its values decode as.
    ///   - pushPath: The path of its push socket, when not `<path>/push`.
    ///   - clientID: The client named on its reads (`Client-ID`); give the same one to
    ///     the optimistic resource that sends mutations for it, so that its values say which of
    ///     them they contain. ``optimisticResource(at:for:pushPath:store:clientID:)`` does this itself.
    public func resource<Value: Decodable & Sendable>(
        at path: String, as type: Value.Type = Value.self, pushPath: String? = nil, clientID: ClientID = ClientID()
    ) -> RemoteResource<Value> {
        RemoteResource(sources: sources(Value.self, at: path, pushPath: pushPath, clientID: clientID), policy: policy, clock: clock)
    }

    /// A resource at `path` that the app changes with mutations of type `M`: the resource (as
    /// ``resource(at:as:pushPath:clientID:)`` makes it) under an `OptimisticResource` that
    /// sends each mutation with `POST <path>` and its `Mutation-ID`, in order, for as long as
    /// it takes, keeping its queue in `store` across launches. Stopping it stops the resource
    /// under it too.
    ///
    /// - Parameters:
    ///   - path: The resource's path on the server, one of the app's own.
    ///   - type: The mutations' type.
    ///   - pushPath: The path of its push socket, when not `<path>/push`.
    ///   - store: Where the queue of mutations is kept across launches; `nil` keeps it in memory.
    ///   - clientID: The client that numbers its mutations and reads its values; a new one by
    ///     default. A simulation gives one of its own, so that every name in its run comes from
    ///     its seed.
    public func optimisticResource<M: Mutation>(
        at path: String, for type: M.Type = M.self, pushPath: String? = nil, store: (any MutationStore<M>)? = nil, clientID: ClientID = ClientID()
    ) -> OptimisticResource<M> where M.Value: Decodable {
        let resource = resource(at: path, as: M.Value.self, pushPath: pushPath, clientID: clientID)
        let sender = HTTPMutationSender<M>(url: url(path), headers: headers, transport: transport, maximumResponseBytes: maximumResponseBytes)
        return OptimisticResource(
            resource: resource, store: store, clientID: clientID, policy: policy, clock: clock, stopsResource: true,
            send: sender.callAsFunction
        )
    }

    /// The sources of a resource: pull, push and connectivity, with `clientID` on each.
    private func sources<Value: Decodable & Sendable>(
        _ type: Value.Type, at path: String, pushPath: String?, clientID: ClientID
    ) -> ResourceSources<Value> {
        let (online, report) = AsyncStream.makeStream(of: Bool.self, bufferingPolicy: .bufferingNewest(1))
        let headers = headers.merging(["Client-ID": clientID.rawValue]) { _, client in client }
        var sources = ResourceSources(
            pull: HTTPPull<Value>(url: url(path), headers: headers, transport: transport, maximumResponseBytes: maximumResponseBytes),
            push: WebSocketPush<Value>(
                url: pushURL(pushPath ?? path + "/push"),
                headers: headers,
                initialBackoff: reconnectBackoff,
                maxBackoff: reconnectBackoff * 4,
                // An upgrade is a request: no longer unanswered than the policy lets any be. The
                // first waits a second at most: a restarted server would otherwise cost the
                // whole deadline before the next attempt.
                handshakeTimeout: policy.requestTimeout ?? .seconds(10),
                firstHandshakeTimeout: .seconds(1),
                clock: clock,
                logger: logger,
                onConnectionChange: { report.yield($0) }
            ).over(transport)
        )
        sources.connectivity = { send in
            for await isOnline in online {
                await send(isOnline)
            }
        }
        return sources
    }

    // MARK: Requests of the app's own

    /// `GET path` (a path of the app's own, with its query), decoded as `Answer`.
    ///
    /// - Throws: `HTTPStatusError` for a status outside 200–299, ``ResponseTooLargeError``,
    ///   the decoder's error, or the transport's.
    public func get<Answer: Decodable>(_ path: String, as type: Answer.Type = Answer.self) async throws -> Answer {
        try await get(url(path), as: Answer.self)
    }

    /// `GET url`, decoded as `Answer`. For an address the server sent (a next page, say), first
    /// check that it leads to this server with ``link(_:)``: every request carries the session's
    /// token.
    public func get<Answer: Decodable>(_ url: URL, as type: Answer.Type = Answer.self) async throws -> Answer {
        let data = try await transport.body(of: TransportRequest(method: "GET", url: url, headers: headers), limit: maximumResponseBytes)
        return try JSONDecoder().decode(Answer.self, from: data)
    }

    /// `POST path` with `body` as JSON (sorted keys), its answer decoded as `Answer`.
    ///
    /// - Throws: as ``get(_:as:)-(String,_)``, and the encoder's error.
    public func post<Body: Encodable, Answer: Decodable>(_ path: String, _ body: Body, as type: Answer.Type = Answer.self) async throws -> Answer {
        let encoder = JSONEncoder()
        encoder.outputFormatting = .sortedKeys
        let request = TransportRequest(
            method: "POST", url: url(path), headers: headers.merging(["Content-Type": "application/json"]) { _, json in json },
            body: try encoder.encode(body))
        let data = try await transport.body(of: request, limit: maximumResponseBytes)
        return try JSONDecoder().decode(Answer.self, from: data)
    }

    // MARK: Addresses

    /// `path`, one of the app's own paths (`/me/ride`), on the server. Never for an address
    /// the server sent: those go through ``link(_:)``.
    public func url(_ path: String) -> URL {
        Self.url(path, on: server)
    }

    /// `path` on `server`, one slash between them whichever side has one.
    package static func url(_ path: String, on server: URL) -> URL {
        let base = server.absoluteString.hasSuffix("/") ? String(server.absoluteString.dropLast()) : server.absoluteString
        let joined = path.hasPrefix("/") ? base + path : base + "/" + path
        // A path of the app's own that does not parse is appended as a path component
        // (escaped) rather than crash the app.
        return URL(string: joined) ?? server.appendingPathComponent(path)
    }

    /// The WebSocket address (`ws://` or `wss://`) of `path`, one of the app's own paths.
    public func pushURL(_ path: String) -> String {
        Self.webSocketAddress(of: url(path))
    }

    /// `address` with its scheme made `ws` (or `wss` for `https`).
    static func webSocketAddress(of address: URL) -> String {
        guard var components = URLComponents(url: address, resolvingAgainstBaseURL: false) else { return address.absoluteString }
        components.scheme = components.scheme?.lowercased() == "https" ? "wss" : "ws"
        return components.string ?? address.absoluteString
    }

    /// `link`, a path (with its query) or an address the server sent, as an address on this
    /// server.
    ///
    /// A server's data is not trusted to be well formed: a link that does not parse is an error,
    /// not a crash (a link kept in a journal would crash the app at every launch), and a link to
    /// another server is refused, since every request carries the session's token.
    ///
    /// - Throws: ``ForeignLinkError`` for a link that does not parse or leads off the server.
    public func link(_ link: String) throws(ForeignLinkError) -> URL {
        guard let url = URL(string: link, relativeTo: server)?.absoluteURL,
            url.scheme?.lowercased() == server.scheme?.lowercased(),
            url.host?.lowercased() == server.host?.lowercased(),
            url.port == server.port
        else {
            throw ForeignLinkError(link: link)
        }
        return url
    }

    /// A short message for an error of a request, for a user: "connection refused" rather than
    /// the dump of a transport error's fields.
    public static func message(for error: any Error) -> String {
        if let foreign = error as? ForeignLinkError { return foreign.description }
        return HTTPExchange.message(for: error)
    }
}

/// A link from the server that the app does not follow: it does not parse as an address, or it
/// leads to another server (see ``SyncEndpoint/link(_:)``).
public struct ForeignLinkError: Error, Hashable, Sendable, CustomStringConvertible {
    /// The link as the server sent it.
    public let link: String

    /// An error for `link`.
    public init(link: String) {
        self.link = link
    }

    /// What a user is shown: the link, escaped (it is the server's, so may hold anything) and
    /// cut to 80 characters.
    public var description: String {
        let shown = link.count > 80 ? String(link.prefix(80)) + "…" : link
        return "the server sent a link the app cannot follow: \(shown.debugDescription)"
    }
}
