import Foundation
import NightrideModel
import StateLoopSync
import StateLoopSyncTransports

/// The server's HTTP API, as one logged-in user: the bearer token and the addresses of the
/// user's resources.
public struct NightrideAPI: Sendable {
    /// The server, `http://host:port`.
    public let server: URL
    /// The logged-in user.
    public let user: String
    /// The bearer token from the login.
    public let token: String

    /// The API as `user`, with a `token` from an earlier login.
    public init(server: URL, user: String, token: String) {
        self.server = server
        self.user = user
        self.token = token
    }

    /// Logs `name` in with `password`; a name the server has not seen creates an account with
    /// that password.
    ///
    /// - Throws: `HTTPStatusError` 401 for a wrong password, 400 for a refused name or
    ///   password; the transport's error when the server cannot be reached.
    public static func login(server: URL, name: String, password: String) async throws -> NightrideAPI {
        let body = try JSONEncoder().encode(LoginRequest(name: name, password: password))
        let answer = try JSONDecoder().decode(
            LoginResponse.self, from: try await HTTPExchange.post(server.appendingPathComponent("login"), json: body)
        )
        return NightrideAPI(server: server, user: answer.user, token: answer.token)
    }

    /// A short message for an error of this API, for a user: "connection refused" rather than
    /// the dump of a transport error's fields.
    public static func message(for error: any Error) -> String {
        HTTPExchange.message(for: error)
    }

    /// The `Authorization` header of every request.
    public var headers: [String: String] {
        ["Authorization": "Bearer \(token)"]
    }

    /// `path`, one of the client's own paths (`/me/ride`), on the server.
    ///
    /// Never for an address the server sent: those go through ``link(_:)``, which refuses what
    /// it cannot follow. A path of the client's own always parses; should one not, it is
    /// appended to the server's address as a path, rather than crash the client.
    public func url(_ path: String) -> URL {
        URL(string: path, relativeTo: server)?.absoluteURL ?? server.appendingPathComponent(path)
    }

    /// `link`, a path (with its query) or an address the server sent, as an address on this
    /// API's server.
    ///
    /// The server's data is not trusted to be well formed: a link that does not parse is an
    /// error, not a crash (a history page's `next` is journaled, so a crash there came back at
    /// every launch). Nor is a link to another server followed: every request carries this
    /// user's token.
    ///
    /// - Throws: ``BadLinkError`` for a link that does not parse or leads off the server.
    public func link(_ link: String) throws(BadLinkError) -> URL {
        guard let url = URL(string: link, relativeTo: server)?.absoluteURL,
            url.scheme?.lowercased() == server.scheme?.lowercased(),
            url.host?.lowercased() == server.host?.lowercased(),
            url.port == server.port
        else {
            throw BadLinkError(link: link)
        }
        return url
    }

    /// The WebSocket address of `path`, one of the client's own paths.
    public func pushURL(_ path: String) -> String {
        let address = url(path)
        // Cannot fail for an address that parsed; should it, the push source is handed the HTTP
        // address, which it refuses (and logs) without crashing the client.
        guard var components = URLComponents(url: address, resolvingAgainstBaseURL: false) else { return address.absoluteString }
        components.scheme = components.scheme == "https" ? "wss" : "ws"
        return components.string ?? address.absoluteString
    }

    /// The places whose name matches `query`.
    public func places(matching query: String) async throws -> [Place] {
        guard var components = URLComponents(url: url("/places"), resolvingAgainstBaseURL: false) else {
            throw BadLinkError(link: "/places")
        }
        components.queryItems = [URLQueryItem(name: "q", value: query)]
        guard let address = components.url else { throw BadLinkError(link: "/places?q=\(query)") }
        return try await fetch([Place].self, address)
    }

    /// The history page at `address`, as the previous page named it.
    ///
    /// - Throws: ``BadLinkError`` when `address`, or the page's own `next`, cannot be followed
    ///   (a page is refused whole, so that its link never reaches the state, nor the journal);
    ///   the transport's or the decoder's error otherwise.
    public func history(at address: String) async throws -> HistoryPage {
        let page = try await fetch(HistoryPage.self, try link(address))
        if let next = page.next {
            _ = try link(next)
        }
        return page
    }

    /// `GET url` as this user, decoded.
    private func fetch<T: Decodable>(_ type: T.Type, _ url: URL) async throws -> T {
        try JSONDecoder().decode(T.self, from: try await HTTPExchange.get(url, headers: headers))
    }
}

/// A link from the server that the client does not follow: it does not parse as an address, or
/// it leads to another server.
public struct BadLinkError: Error, Equatable, CustomStringConvertible {
    /// The link as the server sent it.
    public let link: String

    /// The error for `link`.
    public init(link: String) {
        self.link = link
    }

    /// What a user is shown: the link, escaped and cut.
    public var description: String {
        // Quoted with escapes, and cut: the link is the server's, so may hold anything.
        let shown = link.count > 80 ? String(link.prefix(80)) + "…" : link
        return "the server sent a link the client cannot follow: \(shown.debugDescription)"
    }
}
