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

    /// `path` on the server (a path may carry a query, as history pages do).
    public func url(_ path: String) -> URL {
        URL(string: path, relativeTo: server)!.absoluteURL
    }

    /// The WebSocket address of `path`.
    public func pushURL(_ path: String) -> String {
        var components = URLComponents(url: url(path), resolvingAgainstBaseURL: false)!
        components.scheme = components.scheme == "https" ? "wss" : "ws"
        return components.string!
    }

    /// The places whose name matches `query`.
    public func places(matching query: String) async throws -> [Place] {
        var components = URLComponents(url: url("/places"), resolvingAgainstBaseURL: false)!
        components.queryItems = [URLQueryItem(name: "q", value: query)]
        return try await fetch([Place].self, components.url!)
    }

    /// The history page at `address`, as the previous page named it.
    public func history(at address: String) async throws -> HistoryPage {
        try await fetch(HistoryPage.self, url(address))
    }

    /// `GET url` as this user, decoded.
    private func fetch<T: Decodable>(_ type: T.Type, _ url: URL) async throws -> T {
        try JSONDecoder().decode(T.self, from: try await HTTPExchange.get(url, headers: headers))
    }
}
