import Foundation
import HTTPTypes
import Hummingbird
import NIOCore
import StateLoopServer
import Testing

/// `Request.bearerToken`: the token of one `Authorization: Bearer` header, or `nil`.
@Suite("Sync server: bearer tokens", .timeLimit(.minutes(4)))
struct BearerTokenTests {
    /// A request with these `Authorization` header values, one field each.
    static func request(authorization values: [String]) -> Request {
        var fields = HTTPFields()
        for value in values { fields.append(HTTPField(name: .authorization, value: value)) }
        let head = HTTPRequest(method: .get, scheme: "http", authority: "127.0.0.1", path: "/me/notes", headerFields: fields)
        return Request(head: head, body: RequestBody(buffer: ByteBuffer()))
    }

    @Test("the token of Authorization: Bearer, whatever the scheme's case and the whitespace around it")
    func tokens() {
        let cases: [(String, String?)] = [
            ("Bearer abc.DEF-123_~+/=", "abc.DEF-123_~+/="),
            ("bearer abc", "abc"),
            ("BEARER abc", "abc"),
            ("BeArEr abc", "abc"),
            ("  Bearer   abc  ", "abc"),
            ("Bearer\tabc\t", "abc"),
            // Another scheme, no token, a token with whitespace inside, a scheme run into it.
            ("Basic YWxhZGRpbjpvcGVuc2VzYW1l", nil),
            ("Bearer", nil),
            ("Bearer   ", nil),
            ("", nil),
            ("Bearer a b", nil),
            ("Bearerabc", nil),
            ("Bearer, abc", nil),
            ("Token abc", nil),
        ]
        for (value, token) in cases {
            #expect(Self.request(authorization: [value]).bearerToken == token, "\(value.debugDescription)")
        }
    }

    @Test("nil without an Authorization header, and with more than one, even two equal ones")
    func missingOrRepeated() {
        #expect(Self.request(authorization: []).bearerToken == nil)
        #expect(Self.request(authorization: ["Bearer abc", "Bearer def"]).bearerToken == nil)
        #expect(Self.request(authorization: ["Bearer abc", "Bearer abc"]).bearerToken == nil)
        #expect(Self.request(authorization: ["Basic x", "Bearer abc"]).bearerToken == nil)
    }

    @Test("AccessPolicy's documented example is the code compiled here, and it finds the session by the bearer token")
    func accessPolicyExample() async throws {
        let tests = URL(fileURLWithPath: #filePath).deletingLastPathComponent()
        let root = tests.deletingLastPathComponent().deletingLastPathComponent()
        let source = try String(contentsOf: root.appendingPathComponent("Sources/StateLoopServer/Declaring/AccessPolicy.swift"), encoding: .utf8)
        let lines = source.components(separatedBy: "\n")
        let start = try #require(lines.firstIndex(of: "/// ```swift"))
        let end = try #require(lines[(start + 1)...].firstIndex(of: "/// ```"))
        let documented = lines[(start + 1)..<end].map { $0 == "///" ? "" : String($0.dropFirst(4)) }.joined(separator: "\n") + "\n"
        let example = try String(contentsOf: tests.appendingPathComponent("Guide/AccessPolicyExample.swift"), encoding: .utf8)
        let compiled = try #require(example.components(separatedBy: "// AccessPolicy example:\n\n").last)
        #expect(documented == compiled, "AccessPolicy.swift's example and Guide/AccessPolicyExample.swift differ")

        let store = try SQLiteStore()
        let sessions = Sessions(store: store)
        let rules = Rules(sessions: sessions)
        let token = try await sessions.issue(to: "ann", on: SyncServer(store: store, access: rules))
        #expect(try await rules.principal(for: Self.request(authorization: ["bearer \(token)"])) == "ann")
        #expect(try await rules.principal(for: Self.request(authorization: ["Bearer other"])) == nil)
        #expect(try await rules.principal(for: Self.request(authorization: [])) == nil)
    }
}
