import Foundation
import HTTPTypes
import Hummingbird
import Logging
import NIOCore
import ServerTestApp
import StateLoopServer
import StateLoopWire
import Testing

/// An app's own routes answer as the kit's: bodies decoded within the server's limit, refusals
/// and decoding failures as `ErrorBody` JSON, answers as JSON with sorted keys.
@Suite("Sync server: the app's JSON routes", .timeLimit(.minutes(5)))
struct RouteJSONTests {
    /// A notes server with the app's routes (`Notes.addRoutes`), bodies of at most 1,000 bytes.
    private func withAppRoutes(_ body: (TestClient) async throws -> Void) async throws {
        var logger = Logger(label: "stateloop.server.test")
        logger.logLevel = .critical
        let server = SyncServer(
            store: try SQLiteStore(), access: Notes.Rules(), configuration: SyncServerConfiguration(maximumBodyBytes: 1_000), logger: logger
        )
        Notes.declare(on: server)
        try await withRunning(server, routes: Notes.addRoutes(to:)) { port in try await body(TestClient(port: port)) }
    }

    @Test("a body decoded through the context, a value returned: JSON with sorted keys at every depth, Content-Type application/json")
    func decodesAndAnswers() async throws {
        try await withAppRoutes { client in
            let answer = try await Self.exchange(port: client.port, "POST", "/profile", body: #"{"name":"ann","age":7}"#)
            #expect(answer.status == 200)
            #expect(answer.headers["content-type"] == "application/json")
            #expect(answer.body == #"{"alpha":7,"middle":{"b":1,"y":2},"zeta":"welcome, ann"}"#)
            let created = try await client.send("POST", "profile/created", as: nil, body: Data(#"{"age":7,"name":"ann"}"#.utf8))
            #expect(created.status == 201)
            #expect(String(decoding: created.body, as: UTF8.self) == answer.body)
        }
    }

    @Test("the app's routes are counted in the metrics as the kit's, by pattern and status; unknown paths under one counter")
    func metrics() async throws {
        try await withAppRoutes { client in
            _ = try await Self.exchange(port: client.port, "POST", "/profile", body: #"{"name":"ann","age":7}"#)
            _ = try await Self.exchange(port: client.port, "POST", "/profile", body: #"{"name":"root","age":1}"#)
            _ = try await Self.exchange(port: client.port, "POST", "/profile", body: "{not json")
            for index in 0..<50 {
                _ = try await client.send("GET", "nowhere/\(index)", as: nil)
            }
            _ = try await client.send("GET", "me/notes", as: nil)
            let text = String(decoding: try await client.send("GET", "metrics", as: nil).body, as: UTF8.self)
            for line in [
                #"stateloop_requests_total{route="POST /profile",status="200"} 1"#,
                #"stateloop_requests_total{route="POST /profile",status="409"} 1"#,
                #"stateloop_requests_total{route="POST /profile",status="400"} 1"#,
                #"stateloop_requests_total{route="unmatched",status="404"} 50"#,
                #"stateloop_requests_total{route="GET /me/notes",status="401"} 1"#,
            ] {
                #expect(text.contains(line), "\(line) not in:\n\(text)")
            }
            #expect(!text.contains("nowhere"), "a counter per unknown path")
        }
    }

    @Test("a refusal the route throws is answered with its status and the kit's error body")
    func refusal() async throws {
        try await withAppRoutes { client in
            let answer = try await Self.exchange(port: client.port, "POST", "/profile", body: #"{"name":"root","age":1}"#)
            #expect(answer.status == 409)
            #expect(answer.headers["content-type"] == "application/json")
            #expect(answer.body == #"{"error":"nameTaken","message":"the name 'root' is taken"}"#)
        }
    }

    @Test("an error the route throws that is no HTTP answer: 503 unavailable with Retry-After and the kit's error body, counted")
    func failure() async throws {
        try await withAppRoutes { client in
            let answer = try await Self.exchange(port: client.port, "GET", "/broken", body: "")
            #expect(answer.status == 503)
            #expect(try JSONDecoder().decode(ErrorBody.self, from: Data(answer.body.utf8)).error == "unavailable")
            #expect(answer.headers["retry-after"] == "1")
            let text = String(decoding: try await client.send("GET", "metrics", as: nil).body, as: UTF8.self)
            #expect(text.contains(#"stateloop_requests_total{route="GET /broken",status="503"} 1"#), "\(text)")
        }
    }

    @Test("malformed JSON, JSON of the wrong shape, no body: 400 badRequest saying where; beyond the server's limit: 413 bodyTooLarge")
    func badBodies() async throws {
        try await withAppRoutes { client in
            let cases: [(body: Data, status: Int, code: String, mentions: String?)] = [
                (Data("{not json".utf8), 400, "badRequest", nil),
                (Data("name=ann&age=7".utf8), 400, "badRequest", nil),
                (Data(#"{"name": 7, "age": 1}"#.utf8), 400, "badRequest", "name"),
                (Data(#"{"name": "ann"}"#.utf8), 400, "badRequest", "age"),
                (Data(), 400, "badRequest", nil),
                (Data(repeating: UInt8(ascii: " "), count: 1_001), 413, "bodyTooLarge", "1000"),
            ]
            for (body, status, code, mentions) in cases {
                let answer = try await client.send("POST", "profile", as: nil, body: body)
                let text = String(decoding: answer.body, as: UTF8.self)
                #expect(answer.status == status, "\(code): \(text)")
                #expect(TestClient.errorCode(answer.body) == code, "\(text)")
                if let mentions { #expect(text.contains(mentions), "\(text)") }
            }
            // The limit is the server's, inclusive: 1,000 bytes of valid JSON are read.
            let padded = #"{"name":"ann","age":7}"# + String(repeating: " ", count: 1_000 - 22)
            #expect(try await client.send("POST", "profile", as: nil, body: Data(padded.utf8)).status == 200)
            // A route that collects its body itself, up to the context's limit, gets the same 413.
            let echo = try await client.send("POST", "echo", as: nil, body: Data(repeating: UInt8(ascii: "x"), count: 1_001))
            #expect(echo.status == 413 && TestClient.errorCode(echo.body) == "bodyTooLarge", "\(String(decoding: echo.body, as: UTF8.self))")
            #expect(try await client.send("POST", "echo", as: nil, body: Data("hi".utf8)).body == Data("hi".utf8))
        }
    }

    @Test("the kit's own routes answer their bad bodies with the same errors")
    func kitRoutesAnswerTheSame() async throws {
        try await withAppRoutes { client in
            let cases = [(Data("{not json".utf8), "badRequest"), (Data(repeating: UInt8(ascii: " "), count: 1_001), "bodyTooLarge")]
            for (sequence, (body, code)) in cases.enumerated() {
                let kit = try await client.send("POST", "me/notes", as: "ann", body: body, mutationID: "c:\(sequence + 1)")
                let app = try await client.send("POST", "profile", as: nil, body: body)
                #expect(kit.status == app.status && TestClient.errorCode(kit.body) == code && TestClient.errorCode(app.body) == code)
            }
        }
    }

    @Test("Sources/StateLoopServer/StateLoopServer.docc/Server.md's sign-in route is the code compiled here, and answers as it says")
    func guideExample() async throws {
        let tests = URL(fileURLWithPath: #filePath).deletingLastPathComponent()
        let root = tests.deletingLastPathComponent().deletingLastPathComponent()
        let guide = try String(contentsOf: root.appendingPathComponent("Sources/StateLoopServer/StateLoopServer.docc/Server.md"), encoding: .utf8)
        let start = try #require(guide.range(of: "  ```swift\n  router.post(\"login\")"))
        let end = try #require(guide.range(of: "\n  ```", range: start.upperBound..<guide.endIndex))
        let shown = guide[guide.index(start.lowerBound, offsetBy: "  ```swift\n".count)..<end.lowerBound]
            .components(separatedBy: "\n").map { String($0.dropFirst(2)) }
        let code = try String(contentsOf: tests.appendingPathComponent("Guide/LoginRouteExample.swift"), encoding: .utf8)
        let from = try #require(code.range(of: "// Sources/StateLoopServer/StateLoopServer.docc/Server.md:\n"))
        let to = try #require(code.range(of: "\n        // End of the example.", range: from.upperBound..<code.endIndex))
        let compiled = code[from.upperBound..<to.lowerBound].components(separatedBy: "\n").map { String($0.dropFirst(8)) }
        #expect(shown == compiled, "Sources/StateLoopServer/StateLoopServer.docc/Server.md and Guide/LoginRouteExample.swift differ")

        let server = SyncServer(store: try SQLiteStore(), access: Notes.Rules())
        let sessions = LoginRouteExample.Sessions(passwords: ["ann": "pw"])
        try await withRunning(server, routes: { LoginRouteExample.addRoutes(to: $0, sessions: sessions) }) { port in
            let client = TestClient(port: port)
            let signedIn = try await client.send("POST", "login", as: nil, body: Data(#"{"name":"ann","password":"pw"}"#.utf8))
            #expect(signedIn.status == 200 && String(decoding: signedIn.body, as: UTF8.self) == #"{"token":"t-ann","user":"ann"}"#)
            let wrong = try await client.send("POST", "login", as: nil, body: Data(#"{"name":"ann","password":"no"}"#.utf8))
            #expect(wrong.status == 401 && TestClient.errorCode(wrong.body) == "wrongPassword")
        }
    }

    /// One request on a connection of its own, closed after the answer: the status, the
    /// headers (names lowercased) and the body.
    static func exchange(port: Int, _ method: String, _ path: String, body: String) async throws -> (
        status: Int, headers: [String: String], body: String
    ) {
        let connection = try RawConnection(port: port)
        let request = "\(method) \(path) HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Length: \(body.utf8.count)\r\nConnection: close\r\n\r\n\(body)"
        #expect(connection.send(Array(request.utf8)))
        let (text, closed) = await connection.readUntilClosed(within: .seconds(30))
        #expect(closed, "the server did not close the connection: \(text)")
        let parts = text.components(separatedBy: "\r\n\r\n")
        let lines = parts[0].components(separatedBy: "\r\n")
        let status = lines.first.flatMap { Int($0.split(separator: " ").dropFirst().first ?? "") } ?? 0
        var headers: [String: String] = [:]
        for line in lines.dropFirst() {
            guard let colon = line.firstIndex(of: ":") else { continue }
            headers[line[..<colon].lowercased()] = line[line.index(after: colon)...].trimmingCharacters(in: .whitespaces)
        }
        return (status, headers, parts.dropFirst().joined(separator: "\r\n\r\n"))
    }
}

/// The principal of an app's own route, and the kit's answers a route throws, as the kit's own
/// routes give them.
@Suite("Sync server: principals and answers for the app's routes")
struct RoutePrincipalTests {
    /// An access policy whose session store cannot be reached.
    struct Unreachable: AccessPolicy {
        struct StoreDown: Error {}
        func principal(for request: Request) async throws -> String? { throw StoreDown() }
        func id(of user: String) -> String { user }
        func mayRead(_ key: ResourceKey, as user: String) -> Bool { true }
        func mayWrite(_ key: ResourceKey, as user: String) -> Bool { true }
    }

    private func request(token: String?) -> Request {
        var head = HTTPRequest(method: .get, scheme: "http", authority: "127.0.0.1", path: "/me/history")
        if let token { head.headerFields[.authorization] = "Bearer \(token)" }
        return Request(head: head, body: RequestBody(buffer: ByteBuffer()))
    }

    @Test(
        "a request's principal as the access policy finds it; none is 401 unauthorized, a policy that cannot tell is 503 unavailable with Retry-After"
    )
    func principal() async throws {
        var logger = Logger(label: "stateloop.server.test")
        logger.logLevel = .critical
        let server = SyncServer(store: try SQLiteStore(), access: Notes.Rules(), logger: logger)
        #expect(try await server.principal(of: request(token: "t-ann")) == "ann")
        await #expect(throws: ErrorResponse.unauthorized) { try await server.principal(of: request(token: nil)) }
        await #expect(throws: ErrorResponse.unauthorized) { try await server.principal(of: request(token: "nonsense")) }
        let down = SyncServer(store: try SQLiteStore(), access: Unreachable(), logger: logger)
        await #expect(throws: ErrorResponse.unavailable) { try await down.principal(of: request(token: "t-ann")) }
        #expect(ErrorResponse.unavailable.status == .serviceUnavailable && ErrorResponse.unavailable.headers[.retryAfter] == "1")
        #expect(ErrorResponse.unauthorized.body == ErrorBody(error: "unauthorized", message: "no valid session: sign in again"))
    }

    @Test("too many attempts: 429 with the wait rounded up to whole seconds, at least one, in Retry-After and the message")
    func tooManyAttempts() {
        let held = ErrorResponse.tooManyAttempts(retryAfter: .milliseconds(59_200), "too many sign-ins of this name")
        #expect(held.status == .tooManyRequests && held.body.error == "tooManyAttempts")
        #expect(held.headers[.retryAfter] == "60")
        #expect(held.body.message == "too many sign-ins of this name: try again in 60 s")
        #expect(ErrorResponse.tooManyAttempts(retryAfter: .seconds(3), "x").headers[.retryAfter] == "3")
        #expect(ErrorResponse.tooManyAttempts(retryAfter: .zero, "x").headers[.retryAfter] == "1")
    }
}
