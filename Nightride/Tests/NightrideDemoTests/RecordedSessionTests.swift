import Foundation
import InspectorTestSupport
import Logging
import NightrideClient
import NightrideModel
import NightrideServer
import StateLoop
import StateLoopInspector
import StateLoopInspectorServer
import StateLoopInspectorWire
import StateLoopTesting
import TestSupport
import Testing

/// A Nightride client's session recorded by the inspector becomes a test: replayed through
/// `ClientState.reduce`, it gives every state it recorded. Real sockets on loopback, bounded
/// waits.
@MainActor
@Suite("Nightride: a recorded session becomes a test", .serialized, .timeLimit(.minutes(4)))
struct RecordedSessionTests {
    @Test("a client's session (a ride requested, then cancelled) replays state for state through ClientState.reduce; no secret reaches it")
    func roundTrip() async throws {
        var logger = Logger(label: "test")
        logger.logLevel = .critical
        let server = NightrideServer(configuration: .init(port: 0, inactivityTimeout: nil, epoch: 1), logger: logger)
        let url = URL(string: "http://127.0.0.1:\(try await server.start())")!
        let inspector = Inspector(app: "Nightride", redacting: ["password", "token"])
        let api = try await NightrideAPI.login(server: url, name: "cid", password: "cid-secret-password")
        let client = try NightrideClient(api: api, options: ClientOptions(inspector: inspector))
        let place = PlaceCatalog().search("gare", limit: 1)[0]
        #expect(await eventually(within: .seconds(20)) { client.state.screen == .passengerRequesting && !client.state.isOptimistic })
        client.perform(.requestRide(to: place))
        #expect(await eventually(within: .seconds(20)) { client.state.ride.confirmedVersion?.counter == 2 && !client.state.isOptimistic })
        client.perform(.cancelRide)
        #expect(await eventually(within: .seconds(20)) { client.state.ride.confirmedVersion?.counter == 3 && !client.state.isOptimistic })
        client.stop()
        await server.stop()

        let file = FileManager.default.temporaryDirectory.appendingPathComponent("nightride-session-\(UUID().uuidString).json")
        defer { try? FileManager.default.removeItem(at: file) }
        try JSONEncoder().encode(inspector.session()).write(to: file)
        // To record the checked-in session of RecordedSessions/ again.
        if let keep = ProcessInfo.processInfo.environment["STATELOOP_KEEP_SESSION"] {
            try JSONEncoder().encode(inspector.session()).write(to: URL(fileURLWithPath: keep))
        }
        let text = try String(contentsOf: file, encoding: .utf8)
        #expect(!text.contains("cid-secret-password"))
        #expect(!text.contains(api.token))

        let replay = try SessionReplay(contentsOf: file)
        #expect(Set(replay.session.systems) == ["client cid", "ride cid", "driver mode cid"], "the client's system and its two watched resources")
        let replayed = try replay.check(system: "client cid", reduce: ClientState.reduce, as: ClientState.self, ClientEvent.self)
        #expect(replayed >= 5, "only \(replayed) events replayed")
        #expect(replay.session.records.contains { $0.kind == .effectStarted && $0.request != nil }, "the effects and their requests are recorded")
    }

    @Test(
        "live: a client's ride reaches an inspector's page as it happens, and a preview the page asks for shows a past screen while the client goes on"
    )
    func live() async throws {
        var logger = Logger(label: "test")
        logger.logLevel = .critical
        let inspectorServer = try InspectorServer(configuration: .init(port: 0), logger: logger)
        try await inspectorServer.start()
        let server = NightrideServer(configuration: .init(port: 0, inactivityTimeout: nil, epoch: 1), logger: logger)
        let url = URL(string: "http://127.0.0.1:\(try await server.start())")!
        let appURL: String = try #require(inspectorServer.appURL)
        let inspector = Inspector.nightride(connectingTo: appURL)
        let page = TestPage(url: "ws://127.0.0.1:\(try #require(inspectorServer.port))/page?token=\(inspectorServer.configuration.token)")
        let api = try await NightrideAPI.login(server: url, name: "dee", password: "dee-secret-password")
        let client = try NightrideClient(api: api, options: ClientOptions(inspector: inspector))
        var shown: [Screen] = []
        let subscription = client.system.observe { shown.append($0.screen) }
        #expect(await eventually(within: .seconds(20)) { client.state.screen == .passengerRequesting && !client.state.isOptimistic })
        client.perform(.requestRide(to: PlaceCatalog().search("gare", limit: 1)[0]))
        #expect(await eventually(within: .seconds(20)) { client.state.ride.confirmedVersion?.counter == 2 && !client.state.isOptimistic })

        // The page holds the ride's events as the client reduced them, and no secret.
        #expect(await eventually(within: .seconds(10)) { !page.apps.isEmpty }, "the client never showed up on the page")
        guard case .number(let number)? = page.apps.first?["id"] else { throw Unexpected(description: "no app id in \(page.apps)") }
        let app = Int(number)
        let screens = {
            page.records(of: app).compactMap { record in
                record.state.flatMap { try? JSONDecoder().decode(ClientState.self, from: JSONEncoder().encode($0)) }.map {
                    (record.sequence, $0.screen)
                }
            }
        }
        #expect(await eventually(within: .seconds(10)) { screens().last?.1 == client.state.screen }, "the page never caught up: \(screens())")
        // The ride's resource was watched: its statuses and the request's steps, confirmed.
        let steps = { page.records(of: app).filter { $0.kind == .mutation && $0.resource == "ride dee" }.compactMap(\.outcome) }
        #expect(await eventually(within: .seconds(10)) { steps().contains("confirmed") }, "the ride request was never shown confirmed: \(steps())")
        #expect(Array(steps().prefix(2)) == ["queued", "sent"], "\(steps())")
        #expect(page.records(of: app).contains { $0.kind == .resource && $0.resource == "driver mode dee" })
        let text = String(decoding: try JSONEncoder().encode(page.records(of: app)), as: UTF8.self)
        #expect(!text.contains("dee-secret-password") && !text.contains(api.token), "a secret reached the inspector")

        // A past state (before the request) previewed: observers see it, the client stays live.
        let before = try #require(screens().last { $0.1 == .passengerRequesting }, "\(screens())")
        page.preview(app: app, system: "client dee", sequence: before.0)
        #expect(await eventually(within: .seconds(10)) { page.previews.count == 1 }, "no answer to the preview")
        #expect(page.previews.first?["problem"] == nil, "\(page.previews)")
        #expect(client.system.isPreviewing)
        #expect(
            shown.last == .passengerRequesting && client.state.screen != .passengerRequesting,
            "the observer shows the past screen, the client keeps the live one")
        page.endPreview(app: app, system: "client dee")
        #expect(await eventually(within: .seconds(10)) { page.previews.count == 2 }, "no answer to the end of the preview")
        #expect(!client.system.isPreviewing)
        #expect(shown.last == client.state.screen, "live again")

        subscription.cancel()
        client.stop()
        inspector.disconnect()
        page.close()
        await server.stop()
        await inspectorServer.stop()
    }
}

private struct Unexpected: Error, CustomStringConvertible {
    let description: String
}
