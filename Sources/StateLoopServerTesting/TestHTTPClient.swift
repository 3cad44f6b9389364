import Foundation
import StateLoopSyncTransports
import StateLoopWire

/// Plain HTTP against a server under test: any method, path, headers and body, and the answer's
/// status and body whatever the status, so that a test can check refusals as well as answers.
///
/// ```swift
/// let client = TestHTTPClient(port: port, headers: ["Authorization": "Bearer \(token)"])
/// let answer = try await client.send("POST", "/notes", json: Note(text: "hi"), mutationID: "m1")
/// #expect(answer.status == 200)
/// let refused = try await client.send("POST", "/notes", body: Data("{".utf8))
/// #expect(refused.errorBody?.error == "badRequest")
/// ```
///
/// It uses the transports' HTTP client: a pooled connection the server closed before a request
/// was written (a restart) is replaced and the request sent once more, so a test that restarts its
/// server does not see that race.
public struct TestHTTPClient: Sendable {
    /// The server's address, to which each request's path is appended.
    public var server: URL
    /// Headers sent with every request (a request's own headers win).
    public var headers: [String: String]

    /// A client of the server at `server`.
    public init(server: URL, headers: [String: String] = [:]) {
        self.server = server
        self.headers = headers
    }

    /// A client of the server listening on `port` on `127.0.0.1`.
    public init(port: Int, headers: [String: String] = [:]) {
        // A loopback address with a port always makes a URL.
        self.init(server: URL(string: "http://127.0.0.1:\(port)")!, headers: headers)
    }

    /// `method path` with `body` and `headers` beside the client's own; the answer's body is read
    /// up to `limit` bytes.
    public func send(
        _ method: String, _ path: String, headers: [String: String] = [:], body: Data? = nil, limit: Int = 4 << 20
    ) async throws -> TestHTTPResponse {
        let headers = self.headers.merging(headers) { _, request in request }
        let (status, body) = try await HTTPExchange.send(method, url(path), headers: headers, body: body, limit: limit)
        return TestHTTPResponse(status: status, body: body)
    }

    /// `method path` with `value` as its JSON body, and a `Mutation-ID` and a `Client-ID` when
    /// given.
    public func send(
        _ method: String, _ path: String, json value: some Encodable, mutationID: String? = nil, clientID: String? = nil,
        headers: [String: String] = [:]
    ) async throws -> TestHTTPResponse {
        let (headers, body) = try Self.jsonRequest(value, mutationID: mutationID, clientID: clientID, headers: headers)
        return try await send(method, path, headers: headers, body: body)
    }

    /// The headers and body of a request whose body is `value` as JSON, with a `Mutation-ID` and
    /// a `Client-ID` when given: what both test clients send.
    static func jsonRequest(
        _ value: some Encodable, mutationID: String?, clientID: String?, headers: [String: String]
    ) throws -> (headers: [String: String], body: Data) {
        var headers = headers
        headers["Content-Type"] = "application/json"
        if let mutationID { headers["Mutation-ID"] = mutationID }
        if let clientID { headers["Client-ID"] = clientID }
        return (headers, try JSONEncoder().encode(value))
    }

    /// `path` on the server: `/notes` and `notes` name the same route.
    public func url(_ path: String) -> URL {
        SyncEndpoint.url(path, on: server)
    }
}

/// A server's answer to a ``TestHTTPClient`` request.
public struct TestHTTPResponse: Sendable {
    /// The HTTP status.
    public var status: Int
    /// The body, whatever the status.
    public var body: Data
    /// The headers, their names in lower case (an in-process answer's; the network client's
    /// answers carry none).
    public var headers: [String: String]

    /// An answer with `status`, `body` and `headers`.
    public init(status: Int, body: Data, headers: [String: String] = [:]) {
        self.status = status
        self.body = body
        self.headers = headers
    }

    /// The body decoded from JSON as `type`.
    public func decode<Value: Decodable>(_ type: Value.Type = Value.self) throws -> Value {
        try JSONDecoder().decode(type, from: body)
    }

    /// The body as UTF-8 text, for messages.
    public var text: String {
        String(decoding: body, as: UTF8.self)
    }

    /// The body as the kit's `ErrorBody`, `nil` when it is not one.
    public var errorBody: ErrorBody? {
        try? JSONDecoder().decode(ErrorBody.self, from: body)
    }
}
