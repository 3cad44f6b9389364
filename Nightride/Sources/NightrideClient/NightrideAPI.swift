import Foundation
import Logging
import NightrideModel
import StateLoopSync
import StateLoopSyncTransports

/// The server's HTTP API, as one logged-in user: the bearer token and the addresses of the
/// user's resources, on the library's ``SyncEndpoint``.
public struct NightrideAPI: Sendable {
    /// The server, `http://host:port`.
    public let server: URL
    /// The logged-in user.
    public let user: String
    /// The bearer token from the login.
    public let token: String
    /// What carries the requests and push sockets; `nil`, the network.
    public let transport: (any SyncTransport)?

    /// The API as `user`, with a `token` from an earlier login, over `transport` (`nil`: the
    /// network).
    public init(server: URL, user: String, token: String, transport: (any SyncTransport)? = nil) {
        self.server = server
        self.user = user
        self.token = token
        self.transport = transport
    }

    /// Logs `name` in with `password`; a name the server has not seen creates an account with
    /// that password.
    ///
    /// - Throws: `HTTPStatusError` 401 for a wrong password, 400 for a refused name or
    ///   password; the transport's error when the server cannot be reached.
    public static func login(server: URL, name: String, password: String, transport: (any SyncTransport)? = nil) async throws -> NightrideAPI {
        let answer = try await SyncEndpoint(server: server, transport: transport).post(
            "/login", LoginRequest(name: name, password: password), as: LoginResponse.self)
        return NightrideAPI(server: server, user: answer.user, token: answer.token, transport: transport)
    }

    /// A short message for an error of this API, for a user: "connection refused" rather than
    /// the dump of a transport error's fields.
    public static func message(for error: any Error) -> String {
        SyncEndpoint.message(for: error)
    }

    /// The server as this user's session, with `policy`, `reconnectBackoff` and `clock` for the
    /// resources made on it.
    public func endpoint(
        policy: ResourcePolicy = ResourcePolicy(), reconnectBackoff: Duration = .milliseconds(250), clock: any Clock<Duration> = ContinuousClock()
    ) -> SyncEndpoint {
        SyncEndpoint(
            server: server, bearerToken: token, policy: policy, reconnectBackoff: reconnectBackoff, clock: clock,
            logger: Logger(label: "nightride.push", factory: { _ in SwiftLogNoOpLogHandler() }), transport: transport
        )
    }

    /// `link`, a path (with its query) or an address the server sent, as an address on this
    /// API's server (see ``SyncEndpoint/link(_:)``).
    ///
    /// - Throws: `ForeignLinkError` for a link that does not parse or leads off the server.
    public func link(_ link: String) throws(ForeignLinkError) -> URL {
        try endpoint().link(link)
    }

    /// The places whose name matches `query`.
    public func places(matching query: String) async throws -> [Place] {
        var components = URLComponents()
        components.path = "/places"
        components.queryItems = [URLQueryItem(name: "q", value: query)]
        guard let path = components.string else { throw ForeignLinkError(link: "/places?q=\(query)") }
        return try await endpoint().get(path, as: [Place].self)
    }

    /// The history page at `address`, as the previous page named it.
    ///
    /// - Throws: `ForeignLinkError` when `address`, or the page's own `next`, cannot be followed
    ///   (a page is refused whole, so that its link never reaches the state, nor the journal);
    ///   the transport's or the decoder's error otherwise.
    public func history(at address: String) async throws -> HistoryPage {
        let endpoint = endpoint()
        let page = try await endpoint.get(try endpoint.link(address), as: HistoryPage.self)
        if let next = page.next {
            _ = try endpoint.link(next)
        }
        return page
    }
}
