import Foundation
import StateLoopServer
import StateLoopServerTesting
import StateLoopWire
import Synchronization
import TestSupport
import Testing

/// The tutorial (`Sources/StateLoopSyncTransports/StateLoopSyncTransports.docc/Tutorial.md`, whose code is `Guide/TodoClient.swift`), run against the
/// guide's backend.
@Suite("Tutorial: a first client", .timeLimit(.minutes(5)))
struct TutorialTests {
    @Test("the tutorial shows the code that compiles here, byte for byte, in under 100 lines")
    func tutorialMatchesCode() throws {
        let tests = URL(fileURLWithPath: #filePath).deletingLastPathComponent()
        let code = try String(contentsOf: tests.appendingPathComponent("Guide/TodoClient.swift"), encoding: .utf8)
        let root = tests.deletingLastPathComponent().deletingLastPathComponent()
        let article = "Sources/StateLoopSyncTransports/StateLoopSyncTransports.docc/Tutorial.md"
        let page = try String(contentsOf: root.appendingPathComponent(article), encoding: .utf8)
        let start = try #require(page.range(of: "```swift\nimport Foundation\nimport StateLoopSync\n"))
        let end = try #require(page.range(of: "\n```", range: start.upperBound..<page.endIndex))
        let shown = String(page[page.index(start.lowerBound, offsetBy: "```swift\n".count)..<end.lowerBound]) + "\n"
        #expect(shown == code, "\(article) and Tests/StateLoopServerTests/Guide/TodoClient.swift differ")
        #expect(code.split(separator: "\n", omittingEmptySubsequences: false).count < 100)
    }

    @Test("the client signs in, follows the open count, and adds to-dos: shown at once, on the server once each, and the other user's count follows")
    func clientWorks() async throws {
        let backend = TodoBackend(store: try SQLiteStore()) { name, password in password == "\(name)-pw" }
        let host = backend.host(port: 0)
        let port = try await host.start()
        let server = try #require(URL(string: "http://127.0.0.1:\(port)"))
        let ann = try await TodoClient.signIn(at: server, as: "ann", password: "ann-pw")
        let bob = try await TodoClient.signIn(at: server, as: "bob", password: "bob-pw")
        let seen = Mutex<[String]>([])
        let watching = Task {
            for await screen in ann.screens() { seen.withLock { $0.append(screen) } }
        }
        defer { watching.cancel() }
        #expect(await eventually(within: .seconds(30)) { ann.screen == "[] · 0 open in all" }, "the first screen: \(ann.screen)")

        ann.add("milk")
        ann.add("bread")
        #expect(ann.todos.value?.map(\.title) == ["milk", "bread"], "shown at once, before any answer")
        // Confirmed by the server: the count is its own value, which only it changes.
        let settled = await eventually(within: .seconds(30)) { ann.screen == "[milk, bread] · 2 open in all" }
        #expect(settled, "ann's screen never settled: \(ann.screen)")
        #expect(await eventually(within: .seconds(30)) { seen.withLock { $0.last } == ann.screen }, "the screens stream: \(seen.withLock { $0 })")
        // The server holds each once; bob's count follows through his push socket.
        let list = try await TestHTTPClient(port: port, headers: ["Authorization": "Bearer \(try await Self.token(port, "ann"))"])
            .send("GET", "/me/todos").decode(Versioned<[TodoBackend.Item]>.self)
        #expect(list.value.map(\.title) == ["milk", "bread"])
        #expect(await eventually(within: .seconds(30)) { bob.openCount.status.value?.value == 2 }, "bob's count never followed")
        #expect(bob.todos.value == [], "bob's own list is his")
        ann.stop()
        bob.stop()
        await host.stop()
    }

    /// The tutorial's "running it", compiled (its loop never ends: not run).
    static func runningIt() async throws {
        // Sources/StateLoopSyncTransports/StateLoopSyncTransports.docc/Tutorial.md:
        let client = try await TodoClient.signIn(at: URL(string: "http://127.0.0.1:8080")!, as: "ann", password: "…")
        client.add("milk")
        for await screen in client.screens() {
            print(screen)  // [milk] (sending…) · 0 open in all, then [milk] · 1 open in all
        }
        // End of the example.
    }

    /// A new session's token for `name`.
    private static func token(_ port: Int, _ name: String) async throws -> String {
        let answer = try await TestHTTPClient(port: port).send("POST", "/login", json: TodoBackend.SignIn(name: name, password: "\(name)-pw"))
        return try #require(try answer.decode([String: String].self)["token"])
    }
}
