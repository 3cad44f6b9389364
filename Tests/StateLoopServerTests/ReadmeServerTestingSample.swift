import Foundation
import StateLoopServer
import StateLoopServerTesting
import StateLoopWire
import TestSupport
import Testing

/// The README's loopback test of the guide's backend: compiled, and run.
@Suite("README: testing a server", .timeLimit(.minutes(5)))
struct ReadmeServerTesting {
    @Test("the README's sample: a mutation answered 200, and the list's versions pushed in order")
    func sample() async throws {
        let backend = TodoBackend(store: try SQLiteStore()) { _, _ in true }
        let token = try await Self.signIn(backend)
        // README.md:
        let host = backend.host(port: 0)
        let port = try await host.start()
        let ann = TestHTTPClient(port: port, headers: ["Authorization": "Bearer \(token)"])
        let answer = try await ann.send("POST", "/me/todos", json: TodoBackend.Add(title: "milk"), mutationID: "a:1")
        #expect(answer.status == 200)
        let socket = TestPushSocket(port: port, path: "/me/todos/push", headers: ann.headers)
        let pushed = socket.values([TodoBackend.Item].self)  // every version pushed so far, in order: poll it, bounded
        // End of the example.
        _ = pushed
        let arrived = await eventually(within: .seconds(30)) { socket.values([TodoBackend.Item].self).last?.value.map(\.title) == ["milk"] }
        #expect(arrived, "pushed: \(socket.received)")
        socket.cancel()
        await host.stop()
    }

    /// Signs ann in on a host of its own, and stops it: the token outlives it, in the store.
    private static func signIn(_ backend: TodoBackend) async throws -> String {
        let host = backend.host(port: 0)
        let port = try await host.start()
        let answer = try await TestHTTPClient(port: port).send("POST", "/login", json: TodoBackend.SignIn(name: "ann", password: "pw"))
        await host.stop()
        return try #require(try answer.decode([String: String].self)["token"])
    }
}
