import Foundation
import StateLoopSync
import StateLoopSyncTransports

/// A first StateLoop client, against the to-do backend of `Sources/StateLoopServer/StateLoopServer.docc/Server.md`: it signs in,
/// follows one value the server owns (how many to-dos are open, everyone's), and adds to-dos
/// to the user's own list, shown at once and sent once, in order, whatever the network does.
struct TodoClient {
    /// One to-do, as the server sends it (fields the client does not use are skipped).
    struct Item: Codable, Sendable, Equatable {
        var title: String
    }

    /// Adds a to-do: the same change the server makes on `POST /me/todos`, made on the screen
    /// first. The server's answer, or a push, replaces it with the server's own list.
    struct Add: Mutation {
        var title: String

        func apply(to list: inout [Item]) {
            list.append(Item(title: title))
        }
    }

    /// The user's list: the server's value with the user's pending additions on top.
    let todos: OptimisticResource<Add>
    /// The open to-dos of every user: a value the client only follows.
    let openCount: RemoteResource<Int>

    /// Signs in as `name` at `server` and starts following both values (a pull, then pushes).
    static func signIn(at server: URL, as name: String, password: String) async throws -> TodoClient {
        struct Token: Decodable { var token: String }
        let answer: Token = try await SyncEndpoint(server: server).post("/login", ["name": name, "password": password])
        let endpoint = SyncEndpoint(server: server, bearerToken: answer.token)
        return TodoClient(
            todos: endpoint.optimisticResource(at: "/me/todos", for: Add.self),
            openCount: endpoint.resource(at: "/open-count", as: Int.self)
        )
    }

    /// Adds `title` to the list: on screen now, on the server as soon as it can be sent.
    func add(_ title: String) {
        todos.mutate(Add(title: title))
    }

    /// What a screen would show, each time it changes: the list and the open count.
    func screens() -> AsyncStream<String> {
        let (screens, continuation) = AsyncStream.makeStream(of: String.self, bufferingPolicy: .bufferingNewest(1))
        let (todos, openCount) = (todos, openCount)
        let client = self
        let task = Task {
            await withTaskGroup(of: Void.self) { group in
                group.addTask { for await _ in todos.updates() { continuation.yield(client.screen) } }
                group.addTask { for await _ in openCount.updates() { continuation.yield(client.screen) } }
            }
            continuation.finish()
        }
        continuation.onTermination = { _ in task.cancel() }
        return screens
    }

    /// The screen now: `[milk, bread] (sending…) · 2 open in all` (no count is none yet).
    var screen: String {
        guard let list = todos.value else { return "loading…" }
        let titles = list.map(\.title).joined(separator: ", ")
        let sending = todos.status?.mutations.isEmpty == false ? " (sending…)" : ""
        return "[\(titles)]\(sending) · \(openCount.status.value?.value ?? 0) open in all"
    }

    /// Stops following (both push sockets close).
    func stop() {
        todos.stop()
        openCount.stop()
    }
}
