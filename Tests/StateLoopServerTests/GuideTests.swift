import Foundation
import StateLoopServer
import StateLoopWire
import Testing

/// The guide's backend (`docs/Server.md`, whose code is `Guide/TodoBackend.swift`), run.
@Suite("Guide: your backend in 100 lines", .timeLimit(.minutes(2)))
struct GuideTests {
    @Test("the guide shows the code that compiles here, byte for byte")
    func guideMatchesCode() throws {
        let tests = URL(fileURLWithPath: #filePath).deletingLastPathComponent()
        let code = try String(contentsOf: tests.appendingPathComponent("Guide/TodoBackend.swift"), encoding: .utf8)
        let root = tests.deletingLastPathComponent().deletingLastPathComponent()
        let guide = try String(contentsOf: root.appendingPathComponent("docs/Server.md"), encoding: .utf8)
        let start = try #require(guide.range(of: "```swift\nimport Hummingbird\n"))
        let end = try #require(guide.range(of: "\n```", range: start.upperBound..<guide.endIndex))
        let shown = String(guide[guide.index(start.lowerBound, offsetBy: "```swift\n".count)..<end.lowerBound]) + "\n"
        #expect(shown == code, "docs/Server.md and Tests/StateLoopServerTests/Guide/TodoBackend.swift differ")
    }

    @Test("the to-do backend: add, toggle, a refusal, a server-side recount, hidden lists")
    func todoBackendWorks() async throws {
        let server = TodoBackend.makeServer(store: try SQLiteStore(), sessions: ["t-ann": "ann", "t-bob": "bob"])
        try await withRunning(server) { port in
            let client = TestClient(port: port)
            func post(_ path: String, as user: String, _ body: String, id: String) async throws -> Int {
                try await client.send("POST", path, as: user, body: Data(body.utf8), mutationID: id).status
            }
            #expect(try await post("me/todos", as: "ann", #"{"title":"milk"}"#, id: "t:1") == 200)
            #expect(try await post("me/todos", as: "ann", #"{"title":"bread"}"#, id: "t:2") == 200)
            #expect(try await post("me/todos/toggle", as: "ann", #"{"index":0}"#, id: "t:3") == 200)
            #expect(try await post("me/todos", as: "ann", #"{"title":""}"#, id: "t:4") == 409)
            #expect(try await post("me/todos/toggle", as: "ann", #"{"index":9}"#, id: "t:5") == 404)
            let list = try await client.send("GET", "me/todos", as: "ann").body
            let items = try JSONDecoder().decode(Versioned<[TodoBackend.Item]>.self, from: list)
            #expect(items.value == [TodoBackend.Item(title: "milk", done: true), TodoBackend.Item(title: "bread")])
            #expect(items.version.counter == 3)
            try await TodoBackend.recount(["ann", "bob"], on: server)
            let count = try await client.send("GET", "open-count", as: "bob").body
            #expect(try JSONDecoder().decode(Versioned<Int>.self, from: count).value == 1)
            // bob has his own list, cannot see ann's, and nobody without a session gets anything.
            #expect(try await post("me/todos", as: "bob", #"{"title":"x"}"#, id: "u:1") == 200)
            #expect(try await client.send("GET", "me/todos", as: "bob").body != list)
            #expect(try await client.send("GET", "me/todos", as: "zed").status == 401)
        }
    }
}
