import Foundation
import Logging
import NightrideClient
import NightrideHarness
import NightrideModel
import NightrideServer
import StateLoopSync
import TestSupport
import Testing

/// The client against a server that changes under it: restarted with its sessions gone, and a
/// user who types faster than the resources answer. Real sockets on loopback, bounded waits.
@MainActor
@Suite("Nightride client honesty", .serialized, .timeLimit(.minutes(4)))
struct HonestClientTests {
    func makeServer(port: Int = 0, epoch: UInt64) async throws -> (ServerHarness, URL) {
        var logger = Logger(label: "test")
        logger.logLevel = .critical
        let harness = ServerHarness(configuration: .init(port: port, inactivityTimeout: nil, epoch: epoch), logger: logger)
        let bound = try await harness.server.start()
        return (harness, URL(string: "http://127.0.0.1:\(bound)")!)
    }

    /// Waits (bounded) for `condition`; on a timeout the expectation shows `state`, which says
    /// what the client showed instead.
    func until(_ what: String, state: @autoclosure () -> Any = "", _ condition: () -> Bool) async {
        let met = await eventually(within: .seconds(20)) { condition() }
        #expect(met, "\(what); the client showed \(state())")
    }

    @Test("two toggles in one key batch flip driver mode twice: each from the value shown at its press")
    func toggleTwiceInOneBatch() async throws {
        let (harness, url) = try await makeServer(epoch: 1)
        let api = try await NightrideAPI.login(server: url, name: "bob", password: "bob-pw")
        let client = try NightrideClient(api: api)
        await until("the first screen") { client.state.screen == .passengerRequesting && !client.state.isOptimistic }
        client.perform(.toggleDriverMode)
        client.perform(.toggleDriverMode)
        await until("both toggles confirmed") { !client.state.isOptimistic && client.state.driverMode.confirmedVersion?.counter == 3 }
        #expect(client.state.driverMode.value == false)
        let modes = try await harness.truth().changeLog.records(of: "bob").compactMap { record -> Bool? in
            if case .driverMode(let on) = record.value { on } else { nil }
        }
        #expect(modes == [false, true, false], "the second press must not be lost")
        client.stop()
        await harness.server.stop()
    }

    @Test("a server restart that forgets every session shows 'signed out' (not offline); a new sign-in sends the pending request once")
    func restartSignsOut() async throws {
        let (first, url) = try await makeServer(epoch: 1)
        let port = url.port!
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("nightride-honest-\(UUID().uuidString)").path
        try FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(atPath: folder) }
        // A request FoundationNetworking never delivers (seen about once in 25 loaded runs: the
        // server never received it) is given up and retried after this deadline, well inside
        // the test's bound; the default (30 s) is not.
        var policy = ClientOptions.demoPolicy
        policy.requestTimeout = .seconds(3)
        let options = ClientOptions(journalPath: folder + "/ann.journal", policy: policy)
        let place = PlaceCatalog().search("gare", limit: 1)[0]

        let client = try NightrideClient(api: try await NightrideAPI.login(server: url, name: "ann", password: "ann-pw"), options: options)
        await until("the first screen") { client.state.screen == .passengerRequesting && !client.state.isOptimistic }
        await first.server.stop()
        let (second, _) = try await makeServer(port: port, epoch: 2)
        // Each resource learns it on its own next request; until then the one that saw the
        // server go away may honestly say offline, so the test waits for both.
        await until(
            "both resources signed out within the bound",
            state: (client.state.driverMode.health, client.state.ride.health, first.stats.requests, second.stats.requests)
        ) {
            client.state.driverMode.health.isSignedOut && client.state.ride.health.isSignedOut
        }
        #expect(client.state.statusLine == "Signed out: sign in again")
        #expect(client.state.driverMode.health.isOffline == false && client.state.ride.health.isOffline == false)

        // Asked while signed out: shown at once, kept, not sent.
        client.perform(.requestRide(to: place))
        await until("the request shows") { client.state.screen == .passengerWaiting }
        let stored = client.journal!.mutationStore(named: "ride", for: RideMutation.self)
        #expect(await eventually(within: .seconds(20)) { ((try? await stored.load()) ?? []).count == 1 })
        #expect(try await second.truth().userNames.isEmpty)
        client.stop()

        // Signed in again: a client with the new session on the same journal.
        let renewed = try NightrideClient(api: try await NightrideAPI.login(server: url, name: "ann", password: "ann-pw"), options: options)
        #expect(!renewed.state.isSignedOut, "the journal's last state was signed out; the new session starts unknown, not signed out")
        await until("the request confirmed by the new server") {
            renewed.state.screen == .passengerWaiting && !renewed.state.isOptimistic && !renewed.state.isSignedOut
        }
        #expect(renewed.state.ride.confirmedVersion?.epoch == 2)
        let requests = try await second.truth().changeLog.records(of: "ann").filter { if case .ride(.pending) = $0.value { true } else { false } }
        #expect(requests.count == 1)
        renewed.stop()
        await second.server.stop()
    }

    @Test(
        "a toggle made while the server is away stays shown as waiting, is never refused for the outage, and is applied once when the server is back")
    func actionSurvivesOutage() async throws {
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("nightride-outage-\(UUID().uuidString)").path
        try FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(atPath: folder) }
        var logger = Logger(label: "test")
        logger.logLevel = .critical
        let configuration = NightrideServer.Configuration(dataPath: folder + "/server.sqlite", port: 0, inactivityTimeout: nil)
        let first = ServerHarness(configuration: configuration, logger: logger)
        let port = try await first.server.start()
        let url = URL(string: "http://127.0.0.1:\(port)")!
        // Backoffs of 100 ms at most: a client that gave a mutation up after its retries (ten
        // here) would have refused it within about a second of the outage.
        var policy = ClientOptions.demoPolicy
        policy.maxBackoff = .milliseconds(100)
        let client = try NightrideClient(
            api: try await NightrideAPI.login(server: url, name: "ann", password: "ann-pw"),
            options: ClientOptions(policy: policy, reconnectBackoff: .milliseconds(50))
        )
        await until("the first screen") { client.state.screen == .passengerRequesting && !client.state.isOptimistic }
        await first.server.stop()
        await until("offline", state: client.state.statusLine) { client.state.driverMode.health.isOffline }
        client.perform(.toggleDriverMode)
        await until("waiting to send", state: client.state.statusLine) { client.state.statusLine.contains("waiting to send (1)") }
        // Real time, with a real server away: four times what the old give-up took (ten retries
        // of at most 100 ms), for the client's own timers to run; nothing to wait for but time.
        try await Task.sleep(for: .seconds(4))
        #expect(client.state.driverMode.value == true, "still shown after the outage: \(client.state.statusLine)")
        #expect(client.state.refusal == nil, "nothing was refused: the server was away")
        #expect(client.state.statusLine.contains("waiting to send (1)"), "\(client.state.statusLine)")

        var again = configuration
        again.port = port
        let second = ServerHarness(configuration: again, logger: logger)
        _ = try await second.server.start()
        await until("applied once the server is back", state: client.state.statusLine) {
            client.state.driverMode.value == true && !client.state.isOptimistic && client.state.driverMode.health.waitingToSend == 0
        }
        let modes = try await second.truth().changeLog.records(of: "ann").compactMap { record -> Bool? in
            if case .driverMode(let on) = record.value { on } else { nil }
        }
        #expect(modes.filter { $0 }.count == 1, "applied once: \(modes)")
        #expect(client.state.refusal == nil)
        client.stop()
        await second.server.stop()
    }

    @Test("stop() closes the client's push sockets at once, even while something still holds the client")
    func stopClosesSockets() async throws {
        let (harness, url) = try await makeServer(epoch: 1)
        let client = try NightrideClient(api: try await NightrideAPI.login(server: url, name: "ann", password: "ann-pw"))
        await until("both push sockets open", state: harness.stats) { harness.stats.openSockets == 2 }
        client.stop()
        await until("no socket left open", state: harness.stats) { harness.stats.openSockets == 0 }
        withExtendedLifetime(client) {}
        await harness.server.stop()
    }

    @Test("a stopped client is released: the TUI's sign-in-again loop does not pile up old clients")
    func stoppedClientReleased() async throws {
        let (harness, url) = try await makeServer(epoch: 1)
        weak var released: NightrideClient?
        do {
            let client = try NightrideClient(api: try await NightrideAPI.login(server: url, name: "ann", password: "ann-pw"))
            released = client
            await until("the first screen") { client.state.screen == .passengerRequesting }
            client.stop()
        }
        await until("the client released") { released == nil }
        await harness.server.stop()
    }

    @Test("the search box is not journaled: typed text does not come back after a relaunch")
    func searchBoxNotRestored() async throws {
        let (harness, url) = try await makeServer(epoch: 1)
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("nightride-search-\(UUID().uuidString)").path
        try FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(atPath: folder) }
        let options = ClientOptions(journalPath: folder + "/ann.journal")
        let api = try await NightrideAPI.login(server: url, name: "ann", password: "ann-pw")
        do {
            let client = try NightrideClient(api: api, options: options)
            await until("the first screen") { client.state.screen == .passengerRequesting }
            client.perform(.typeDestination("gare"))
            await until("results") { client.state.search.results?.isEmpty == false }
            client.stop()
        }
        let relaunched = try NightrideClient(api: api, options: options)
        #expect(relaunched.state.search.text == "")
        #expect(relaunched.state.screen == .passengerRequesting, "the rest of the state is back")
        relaunched.stop()
        await harness.server.stop()
    }

    @Test("journals live in the platform's data folder, one per user and server, with names that cannot climb folders")
    func journalLocation() throws {
        let root = FileManager.default.temporaryDirectory.appendingPathComponent("nightride-xdg-\(UUID().uuidString)").path
        defer { try? FileManager.default.removeItem(atPath: root) }
        let server = URL(string: "http://127.0.0.1:8080")!
        #if !canImport(Darwin)
            let xdg = try JournalLocation.journalPath(user: "ann", server: server, environment: ["XDG_DATA_HOME": root + "/data", "HOME": root])
            #expect(xdg == root + "/data/nightride/ann@127.0.0.1-8080.journal")
            let home = try JournalLocation.journalPath(user: "ann", server: server, environment: ["XDG_DATA_HOME": "relative", "HOME": root])
            #expect(home == root + "/.local/share/nightride/ann@127.0.0.1-8080.journal")
            #expect(FileManager.default.fileExists(atPath: root + "/.local/share/nightride"))
        #endif
        let odd = try JournalLocation.journalPath(user: "../évil", server: server, environment: ["XDG_DATA_HOME": root, "HOME": root])
        #expect(!URL(fileURLWithPath: odd).lastPathComponent.contains("/"))
        #expect(URL(fileURLWithPath: odd).deletingLastPathComponent().path.hasSuffix("nightride") || odd.contains("Nightride"))
        #expect(URL(fileURLWithPath: odd).lastPathComponent.hasPrefix("%2E.%2F"))
    }
}
