import Foundation
import StateLoopServer
import StateLoopServerTesting
import StateLoopTesting
import StateLoopWire
import TestSupport
import Testing

/// The guide's backend (`Sources/StateLoopServer/StateLoopServer.docc/Server.md`, whose code is `Guide/TodoBackend.swift`), run.
@Suite("Guide: a whole backend", .timeLimit(.minutes(5)))
struct GuideTests {
    @Test("the guide shows the code that compiles here, byte for byte")
    func guideMatchesCode() throws {
        let tests = URL(fileURLWithPath: #filePath).deletingLastPathComponent()
        let code = try String(contentsOf: tests.appendingPathComponent("Guide/TodoBackend.swift"), encoding: .utf8)
        let root = tests.deletingLastPathComponent().deletingLastPathComponent()
        let guide = try String(contentsOf: root.appendingPathComponent("Sources/StateLoopServer/StateLoopServer.docc/Server.md"), encoding: .utf8)
        let start = try #require(guide.range(of: "```swift\nimport Foundation\nimport Hummingbird\nimport Logging\n"))
        let end = try #require(guide.range(of: "\n```", range: start.upperBound..<guide.endIndex))
        let shown = String(guide[guide.index(start.lowerBound, offsetBy: "```swift\n".count)..<end.lowerBound]) + "\n"
        #expect(shown == code, "Sources/StateLoopServer/StateLoopServer.docc/Server.md and Tests/StateLoopServerTests/Guide/TodoBackend.swift differ")
    }

    /// The test the guide shows: the backend on a free port, a sign-in, a change, and the push
    /// socket that follows it.
    @Test func theGuidesTest() async throws {
        // Sources/StateLoopServer/StateLoopServer.docc/Server.md:
        let backend = TodoBackend(store: try SQLiteStore()) { name, password in password == "\(name)-pw" }
        let host = backend.host(port: 0)
        let port = try await host.start()
        let signIn = try await TestHTTPClient(port: port).send("POST", "/login", json: TodoBackend.SignIn(name: "ann", password: "ann-pw"))
        let token = try #require(try signIn.decode([String: String].self)["token"])
        let ann = TestHTTPClient(port: port, headers: ["Authorization": "Bearer \(token)"])
        let socket = TestPushSocket(port: port, path: "/me/todos/push", headers: ann.headers)
        let added = try await ann.send("POST", "/me/todos", json: TodoBackend.Add(title: "milk"), mutationID: "ann-phone:1")
        #expect(added.status == 200, "\(added.text)")
        // The socket's messages, polled until milk arrives: bounded, and it says what came.
        let pushed = await eventually { socket.values([TodoBackend.Item].self).last?.value.map(\.title) == ["milk"] }
        #expect(pushed, "pushed: \(socket.received)")
        socket.cancel()
        await host.stop()
        // End of the example.
    }

    @Test(
        "the to-do backend: a sign-in with its refusals, add, toggle, refusals, hidden lists, the shared count, and done items cleared a day later and pushed"
    )
    func todoBackendWorks() async throws {
        let clock = TestClock()
        let start = Date(timeIntervalSince1970: 1_800_000_000)
        let backend = TodoBackend(store: try SQLiteStore(), clock: WallClock(clock, startingAt: start)) { name, password in
            password == "\(name)-pw"
        }
        let host = backend.host(port: 0)
        let port = try await host.start()
        defer { Task { await host.stop() } }
        let anonymous = TestHTTPClient(port: port)

        // Sign-in: a token for the right password, a refusal that says why otherwise.
        func signIn(_ name: String) async throws -> TestHTTPClient {
            let answer = try await anonymous.send("POST", "/login", json: TodoBackend.SignIn(name: name, password: "\(name)-pw"))
            #expect(answer.status == 200, "\(answer.text)")
            let token = try #require(try answer.decode([String: String].self)["token"])
            return TestHTTPClient(port: port, headers: ["Authorization": "Bearer \(token)"])
        }
        let wrong = try await anonymous.send("POST", "/login", json: TodoBackend.SignIn(name: "ann", password: "guess"))
        #expect(wrong.status == 401 && wrong.errorBody?.error == "wrongPassword")
        let malformed = try await anonymous.send("POST", "/login", body: Data(#"{"name":"ann"}"#.utf8))
        #expect(malformed.status == 400 && malformed.errorBody?.error == "badRequest", "\(malformed.text)")
        let unnamed = try await anonymous.send("POST", "/login", json: TodoBackend.SignIn(name: " \u{7} ", password: "pw"))
        #expect(unnamed.status == 400 && unnamed.errorBody?.error == "invalidName", "\(unnamed.text)")
        let ann = try await signIn("ann")
        let bob = try await signIn("bob")

        func post(_ client: TestHTTPClient, _ path: String, _ body: some Encodable, id: String) async throws -> Int {
            try await client.send("POST", path, json: body, mutationID: id).status
        }
        #expect(try await post(ann, "/me/todos", TodoBackend.Add(title: "milk"), id: "a:1") == 200)
        #expect(try await post(ann, "/me/todos", TodoBackend.Add(title: "bread"), id: "a:2") == 200)
        #expect(try await post(ann, "/me/todos/toggle", TodoBackend.Toggle(index: 0), id: "a:3") == 200)
        #expect(try await post(ann, "/me/todos", TodoBackend.Add(title: ""), id: "a:4") == 409)
        #expect(try await post(ann, "/me/todos/toggle", TodoBackend.Toggle(index: 9), id: "a:5") == 404)
        #expect(try await post(bob, "/me/todos", TodoBackend.Add(title: "tea"), id: "b:1") == 200)
        let list = try await ann.send("GET", "/me/todos").decode(Versioned<[TodoBackend.Item]>.self)
        #expect(list.value == [TodoBackend.Item(title: "milk", doneAt: start), TodoBackend.Item(title: "bread")])
        #expect(list.version.counter == 4, "made at the sign-in, then two additions and a toggle")
        #expect(try await bob.send("GET", "/open-count").decode(Versioned<Int>.self).value == 2)
        // bob sees his own list, never ann's; without a session, nothing.
        #expect(try await bob.send("GET", "/me/todos").decode(Versioned<[TodoBackend.Item]>.self).value.map(\.title) == ["tea"])
        #expect(try await anonymous.send("GET", "/me/todos").status == 401)

        // A day after it was ticked off, milk leaves ann's list, and her push socket shows it.
        let socket = TestPushSocket(port: port, path: "/me/todos/push", headers: ann.headers)
        defer { socket.cancel() }
        #expect(await eventually(within: .seconds(30)) { socket.values([TodoBackend.Item].self).count == 1 }, "the list never came")
        await clock.advance(by: .seconds(86_400))
        let cleared = await eventually(within: .seconds(30)) {
            socket.values([TodoBackend.Item].self).last?.value == [TodoBackend.Item(title: "bread")]
        }
        #expect(cleared, "pushed: \(socket.received)")
        #expect(socket.values([TodoBackend.Item].self).last?.version.counter == 5)
        #expect(
            try await bob.send("GET", "/me/todos").decode(Versioned<[TodoBackend.Item]>.self).version.counter == 2,
            "bob's list, unchanged, is not written")
        #expect(try await bob.send("GET", "/open-count").decode(Versioned<Int>.self).value == 2, "a done item was not open")
        await host.stop()
    }
}
