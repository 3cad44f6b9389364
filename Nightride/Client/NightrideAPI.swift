import Foundation
import NightrideModel
import StateLoopSync
import StateLoopSyncTransports
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

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
        var request = URLRequest(url: server.appendingPathComponent("login"))
        request.httpMethod = "POST"
        request.setValue("application/json", forHTTPHeaderField: "Content-Type")
        request.httpBody = try JSONEncoder().encode(LoginRequest(name: name, password: password))
        let answer = try await fetch(LoginResponse.self, request)
        return NightrideAPI(server: server, user: answer.user, token: answer.token)
    }

    /// A short message for an error of this API, for a user: a transport error's own message
    /// rather than the dump of its user info that its description is.
    public static func message(for error: any Error) -> String {
        (error as NSError).domain == NSURLErrorDomain ? error.localizedDescription : "\(error)"
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
        return try await Self.fetch([Place].self, authorized(URLRequest(url: components.url!)))
    }

    /// The history page at `address`, as the previous page named it.
    public func history(at address: String) async throws -> HistoryPage {
        try await Self.fetch(HistoryPage.self, authorized(URLRequest(url: url(address))))
    }

    private func authorized(_ request: URLRequest) -> URLRequest {
        var request = request
        for (name, value) in headers {
            request.setValue(value, forHTTPHeaderField: name)
        }
        return request
    }

    private static func fetch<T: Decodable>(_ type: T.Type, _ request: URLRequest) async throws -> T {
        let (data, response) = try await URLSession.shared.cancellationSafeData(for: request)
        if let http = response as? HTTPURLResponse, !(200...299).contains(http.statusCode) {
            throw HTTPStatusError(status: http.statusCode)
        }
        return try JSONDecoder().decode(T.self, from: data)
    }
}
