import Foundation
import Hummingbird
import Logging
import NightrideClient
import NightrideHarness
import NightrideModel
import NightrideServer
import StateLoop
import StateLoopJournal
import StateLoopServer
import StateLoopSyncTransports
import Synchronization
import TestSupport
import Testing

/// A history page's `next` link is the server's data: one that does not parse (`http://a b/`)
/// crashed the terminal client on a force-unwrap, and, being journaled, at every launch after,
/// even against a healthy server.
@MainActor
@Suite("Nightride client: history links from the server", .serialized, .timeLimit(.minutes(4)))
struct HistoryLinkTests {
    nonisolated static let badLink = "http://a b/"

    @Test("a page whose next link does not parse is a failed history load shown to the user; scrolling again fails again, never crashes")
    func badNextLinkReported() async throws {
        let requests = RequestCount()
        let router = Router()
        router.get("me/history") { _, _ -> String in
            requests.count()
            return String(decoding: try JSONEncoder().encode(HistoryPage(items: [], next: Self.badLink)), as: UTF8.self)
        }
        try await withServer(router) { url in
            let client = try NightrideClient(api: NightrideAPI(server: url, user: "ann", token: "t"))
            defer { client.stop() }
            client.perform(.scrollHistory)
            try await until { client.state.history.failure != nil }
            let history = client.state.history
            #expect(history.failure?.contains("cannot follow") == true, "\(history)")
            #expect(history.nextPage == HistoryState.firstPage, "the bad link never reaches the state")
            #expect(!history.wantsMore)
            #expect(requests.value == 1)

            // Again: the same page, the same failure.
            client.perform(.scrollHistory)
            try await until { requests.value == 2 && client.state.history.failure != nil && !client.state.history.wantsMore }
            #expect(client.state.history.nextPage == HistoryState.firstPage)
        }
    }

    @Test("links are followed on the API's server only, and one that does not parse is an error")
    func links() throws {
        let api = NightrideAPI(server: try #require(URL(string: "http://127.0.0.1:8080")), user: "ann", token: "t")
        #expect(try api.link("/me/history?cursor=abc").absoluteString == "http://127.0.0.1:8080/me/history?cursor=abc")
        #expect(try api.link("http://127.0.0.1:8080/me/history").absoluteString == "http://127.0.0.1:8080/me/history")
        #expect(throws: ForeignLinkError(link: Self.badLink)) { try api.link(Self.badLink) }
        // Another server would get the user's token.
        #expect(throws: ForeignLinkError(link: "http://127.0.0.2:8080/me/history")) { try api.link("http://127.0.0.2:8080/me/history") }
        #expect(throws: ForeignLinkError(link: "http://127.0.0.1:8081/me/history")) { try api.link("http://127.0.0.1:8081/me/history") }
    }

    @Test("a replayed page with a bad next link (an older journal's event) leaves the state as a failed load")
    func replayedBadPage() {
        var state = ClientState(user: "ann")
        ClientState.reduce(&state, .historyScrolledToEnd)
        ClientState.reduce(&state, .historyLoaded(HistoryPage(items: [], next: Self.badLink), from: HistoryState.firstPage))
        #expect(state.history.nextPage == HistoryState.firstPage)
        #expect(state.history.failure != nil)
        #expect(!state.history.wantsMore)
    }

    @Test("a journal holding a next link that does not parse restores with the history reset, and the first page loads again from a healthy server")
    func journaledBadLinkReset() async throws {
        var logger = Logger(label: "test")
        logger.logLevel = .critical
        let server = ServerHarness(
            configuration: .init(port: 0, inactivityTimeout: nil, epoch: 1, passwordCost: 4), sampleHistory: true, logger: logger
        ).server
        let port = try await server.start()
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("nightride-history-\(UUID().uuidString)").path
        try FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(atPath: folder) }
        let path = folder + "/ann.journal"
        let api = try await NightrideAPI.login(server: try #require(URL(string: "http://127.0.0.1:\(port)")), name: "ann", password: "ann-pw")

        // What a client journaled before links were checked: a page loaded whose next link is
        // bad, and the user scrolled on (so the next launch asks for it at once).
        var stored = ClientState(user: "ann")
        stored.history.rides = try await server.history(of: "ann").items
        stored.history.nextPage = Self.badLink
        stored.history.wantsMore = true
        do {
            let journal = try Journal<ClientState, ClientEvent>(
                at: path, configuration: JournalConfiguration(schema: ClientState.journalSchema, snapshotInterval: 1)
            )
            let system = System(journal: journal, initialState: stored) { _, _ in }
            system.send(.historyScrolledToEnd)
            system.stop()
            journal.close()
        }

        let client = try NightrideClient(api: api, options: ClientOptions(journalPath: path))
        defer { client.stop() }
        if case .restored = client.journal?.recovery {
        } else {
            Issue.record("expected a restored journal, got \(String(describing: client.journal?.recovery))")
        }
        #expect(client.state.history.nextPage != Self.badLink, "the bad link is not restored")
        let firstPage = try await server.history(of: "ann")
        try await until { client.state.history.rides == firstPage.items && !client.state.history.wantsMore }
        #expect(client.state.history.nextPage == firstPage.next)
        #expect(client.state.history.failure == nil)
        await server.stop()
    }

    /// The shared bounded wait, failing the test (and stopping it) when it runs out.
    private func until(_ condition: () async -> Bool) async throws {
        guard await eventually(within: .seconds(20), condition) else {
            Issue.record("condition not met in time")
            throw CancellationError()
        }
    }

    /// Runs `router` on a free loopback port for the duration of `body`, which gets its address,
    /// then stops it (gracefully, as NIO needs: see `SyncHost`).
    private func withServer(_ router: Router<BasicRequestContext>, _ body: (URL) async throws -> Void) async throws {
        var logger = Logger(label: "bad-links")
        logger.logLevel = .critical
        let application = Application(router: router, configuration: .init(address: .hostname("127.0.0.1", port: 0)), logger: logger)
        let host = SyncHost(logger: logger) { _ in .init(application) }
        try await host.start()
        var failure: (any Error)?
        do {
            try await body(try #require(host.baseURL))
        } catch {
            failure = error
        }
        await host.stop()
        if let failure { throw failure }
    }
}

/// A count shared by a server's handler and the test.
private final class RequestCount: Sendable {
    private let counter = Mutex(0)

    func count() {
        counter.withLock { $0 += 1 }
    }

    var value: Int {
        counter.withLock { $0 }
    }
}
