import Foundation
import Logging
import NightrideClient
import NightrideModel
import NightrideServer
import StateLoopInspector
import StateLoopInspectorWire
import StateLoopTesting
import Testing
import TestSupport

/// A Nightride client's session recorded by the inspector becomes a test: replayed through
/// `ClientState.reduce`, it gives every state it recorded. Real sockets on loopback, bounded
/// waits.
@MainActor
@Suite("Nightride: a recorded session becomes a test", .serialized, .timeLimit(.minutes(1)))
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
        let text = try String(contentsOf: file, encoding: .utf8)
        #expect(!text.contains("cid-secret-password"))
        #expect(!text.contains(api.token))

        let replay = try SessionReplay(contentsOf: file)
        #expect(replay.session.systems == ["client cid"])
        let replayed = try replay.check(system: "client cid", reduce: ClientState.reduce, as: ClientState.self, ClientEvent.self)
        #expect(replayed >= 5, "only \(replayed) events replayed")
        #expect(replay.session.records.contains { $0.kind == .effectStarted && $0.request != nil }, "the effects and their requests are recorded")
    }
}
