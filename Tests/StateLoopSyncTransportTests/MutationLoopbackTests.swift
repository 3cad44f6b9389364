import Foundation
import HTTPTypes
import Hummingbird
import StateLoopSync
import StateLoopSyncTransports
import Synchronization
import Testing

/// A players list: add or remove one name.
enum PlayerChange: Mutation, Equatable {
    case add(String)
    case remove(String)

    func apply(to players: inout [String]) {
        switch self {
        case .add(let name): players.append(name)
        case .remove(let name): players.removeAll { $0 == name }
        }
    }
}

/// A server that applies each mutation id once and refuses duplicates of a name with 409.
actor PlayersBackend {
    private(set) var players = ["ann"]
    private(set) var version: UInt64 = 1
    private var applied: [String: UInt64] = [:]
    private(set) var applications = 0

    func handle(_ change: PlayerChange, id: String) -> (status: HTTPResponse.Status, version: UInt64) {
        if let done = applied[id] { return (.ok, done) }
        if case .add(let name) = change, players.contains(name) { return (.conflict, version) }
        change.apply(to: &players)
        version += 1
        applications += 1
        applied[id] = version
        return (.ok, version)
    }

    var payload: String {
        let names = players.map { "\"\($0)\"" }.joined(separator: ",")
        return #"{"version":{"epoch":0,"counter":\#(version)},"value":[\#(names)]}"#
    }
}

func withPlayersServer(_ body: (PlayersBackend, Int) async throws -> Void) async throws {
    let backend = PlayersBackend()
    let router = Router()
    router.get("players") { _, _ in
        Response(
            status: .ok, headers: [.contentType: "application/json"],
            body: .init(byteBuffer: ByteBuffer(string: await backend.payload)))
    }
    router.post("players") { request, context -> Response in
        let change = try await request.decode(as: PlayerChange.self, context: context)
        let id = request.headers[HTTPField.Name("Mutation-ID")!] ?? ""
        let (status, version) = await backend.handle(change, id: id)
        return Response(
            status: status, headers: [.contentType: "application/json"],
            body: .init(byteBuffer: ByteBuffer(string: #"{"version":{"epoch":0,"counter":\#(version)}}"#)))
    }
    try await withLoopback(router) { port in try await body(backend, port) }
}

@Suite("optimistic mutations over loopback", .timeLimit(.minutes(6)))
struct MutationLoopbackTests {
    @Test("a retried mutation id is applied once by a server that honours it")
    func idempotentRetry() async throws {
        try await withPlayersServer { backend, port in
            let sender = HTTPMutationSender<PlayerChange>(url: URL(string: "http://127.0.0.1:\(port)/players")!)
            let id = MutationID()
            let first = try await sender(.add("bob"), id)
            let retried = try await sender(.add("bob"), id)
            #expect(first == retried)
            #expect(await backend.applications == 1)
            #expect(await backend.players == ["ann", "bob"])
        }
    }

    @Test("an optimistic add shows at once; a refused one disappears with an error; the server's list wins")
    func optimisticOverHTTP() async throws {
        try await withPlayersServer { backend, port in
            var policy = ResourcePolicy()
            policy.pollInterval = nil
            let players = RemoteResource(
                sources: ResourceSources(pull: { try await HTTPPull<[String]>(url: URL(string: "http://127.0.0.1:\(port)/players")!)() }),
                policy: policy
            )
            let sender = HTTPMutationSender<PlayerChange>(url: URL(string: "http://127.0.0.1:\(port)/players")!)
            let roster = OptimisticResource(resource: players, send: { try await sender($0, $1) })
            var updates = roster.updates().makeAsyncIterator()
            var failures = roster.refusals().makeAsyncIterator()
            var status = await updates.next()
            while status?.value != ["ann"] { status = await updates.next() }

            roster.mutate(.add("bob"))
            roster.mutate(.add("ann"))  // the server already has ann: 409
            while status?.value != ["ann", "bob", "ann"] { status = await updates.next() }
            let failure = await failures.next()
            #expect(failure?.mutation == .add("ann"))
            #expect(failure?.error.message == "HTTP 409")

            players.refresh()
            while status?.confirmed?.version != Version(counter: 2) || status?.mutations.isEmpty == false {
                status = await updates.next()
            }
            #expect(status?.value == ["ann", "bob"])
            #expect(await backend.players == ["ann", "bob"])
        }
    }
}
