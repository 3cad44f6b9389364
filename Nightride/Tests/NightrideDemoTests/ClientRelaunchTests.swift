import Foundation
import Logging
import NightrideClient
import NightrideHarness
import NightrideModel
import NightrideServer
import StateLoop
import StateLoopJournal
import StateLoopSync
import TestSupport
import Testing

/// A client stopped while its ride request cannot reach the server, then started again on the
/// same journal: the screen is back at once, and the request is sent once the network is back.
@MainActor
@Suite("Nightride client relaunch", .serialized, .timeLimit(.minutes(4)))
struct ClientRelaunchTests {
    @Test("killed mid-request, a relaunched client shows the right screen and finishes the request, once")
    func relaunchFinishesPendingRequest() async throws {
        var logger = Logger(label: "test")
        logger.logLevel = .critical
        let harness = ServerHarness(configuration: .init(port: 0, inactivityTimeout: nil), logger: logger)
        let server = harness.server
        let port = try await server.start()
        let url = URL(string: "http://127.0.0.1:\(port)")!
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("nightride-relaunch-\(UUID().uuidString)").path
        try FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(atPath: folder) }
        let journalPath = folder + "/ann.journal"
        let place = PlaceCatalog().search("gare", limit: 1)[0]

        // First launch: the screen loads, the network goes, ann asks for a ride.
        let api = try await NightrideAPI.login(server: url, name: "ann", password: "ann-pw")
        do {
            let client = try NightrideClient(api: api, options: ClientOptions(journalPath: journalPath))
            try await until { client.state.screen == .passengerRequesting && !client.state.isOptimistic }
            harness.isNetworkCut = true
            client.perform(.requestRide(to: place))
            try await until { client.state.screen == .passengerWaiting && client.state.isOptimistic }
            // Give the queue time to reach the journal, as it would before a kill in real life.
            let store = client.journal!.mutationStore(named: "ride", for: RideMutation.self)
            try await until { ((try? await store.load()) ?? []).count == 1 }
            client.stop()
        }
        #expect(try await harness.truth().rideStatus(of: "ann")?.value == RideStatus.none)

        // Relaunch, still cut off: the journal restores the screen before any answer.
        let relaunched = try NightrideClient(api: api, options: ClientOptions(journalPath: journalPath))
        #expect(relaunched.state.screen == .passengerWaiting)
        if case .restored = relaunched.journal?.recovery {
        } else {
            Issue.record("expected a restored journal, got \(String(describing: relaunched.journal?.recovery))")
        }

        // The network is back: the pending request goes out and the server confirms it.
        harness.isNetworkCut = false
        try await until {
            relaunched.state.screen == .passengerWaiting && !relaunched.state.isOptimistic
        }
        guard case .pending(let ride)? = try await harness.truth().rideStatus(of: "ann")?.value else {
            Issue.record("the server has no pending ride for ann")
            return
        }
        #expect(ride.destination == place)
        #expect(
            try await harness.truth().changeLog.records(of: "ann").filter { record in
                if case .ride(.pending) = record.value { true } else { false }
            }.count == 1)
        relaunched.stop()
        await server.stop()
    }

    /// The shared bounded wait, failing the test (and stopping it) when it runs out.
    private func until(_ condition: () async -> Bool) async throws {
        guard await eventually(within: .seconds(15), condition) else {
            Issue.record("condition not met in time")
            throw CancellationError()
        }
    }

    @Test("a journal of the previous client version (state 2, with `lastError`) opens migrated: the refusal is still shown")
    func previousVersionJournalMigrates() throws {
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("nightride-upgrade-\(UUID().uuidString)").path
        try FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(atPath: folder) }
        let path = folder + "/ann.journal"

        // The state as version 2 stored it: today's shape with the field's old name.
        var current = ClientState(user: "ann")
        current.refusal = "no driver nearby"
        var stored = try JSONDecoder().decode(JournalValue.self, from: JSONEncoder().encode(current))
        stored.renameField("refusal", to: "lastError")
        var version2 = JournalSchema()
        version2.setVersion(2, of: .state)
        version2.setVersion(2, of: .events)
        do {
            let journal = try Journal<JournalValue, ClientEvent>(
                at: path, configuration: JournalConfiguration(schema: version2, snapshotInterval: 1)
            )
            let system = System(journal: journal, initialState: stored) { _, _ in }
            system.send(.historyScrolledToEnd)
            system.stop()
            journal.close()
        }

        let journal = try Journal<ClientState, ClientEvent>(
            at: path, configuration: JournalConfiguration(schema: ClientState.journalSchema, snapshotInterval: 200)
        )
        #expect(journal.migration?.migrated.map { "\($0.kind) \($0.from)→\($0.to)" } == ["the state 2→4"])
        let system = System(journal: journal, initialState: ClientState(user: "ann"), reduce: ClientState.reduce)
        #expect(system.state.refusal == "no driver nearby")
        #expect(system.state.statusLine == "Refused: no driver nearby")
        system.stop()
        journal.close()
    }

    @Test(
        "a journal of state 3 and events 2 (each resource event with its own value, version, count and health) opens migrated: the last screen is shown, without the old launch's health"
    )
    func resourceEventsMigrate() throws {
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("nightride-upgrade-\(UUID().uuidString)").path
        try FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(atPath: folder) }
        let path = folder + "/ann.journal"
        let offline: JournalValue = ["isLoading": false, "isSlow": false, "isOffline": true, "isSignedOut": false]
        let version: JournalValue = ["epoch": 7, "counter": 12]
        // The state and events as versions 3 and 2 stored them: a resource's health inside the
        // state, and each resource event with its value, version, pending count and health.
        let state: JournalValue = [
            "user": "ann", "history": ["rides": [], "nextPage": "/me/history", "wantsMore": false],
            "driverMode": ["pendingMutations": 0, "health": offline],
            "ride": ["pendingMutations": 0, "health": offline],
        ]
        // The state is saved after the second event (as the old app's reducer left it, here
        // unchanged); the third stays an event, so that both kinds are migrated.
        let events: [JournalValue] = [
            JournalValue(case: "ride", ["pending": 0, "health": offline]),
            JournalValue(case: "ride", ["pending": 0, "health": offline]),
            JournalValue(case: "driverMode", ["_0": true, "version": version, "pending": 1, "health": offline]),
        ]
        var old = JournalSchema()
        old.setVersion(3, of: .state)
        old.setVersion(2, of: .events)
        do {
            let journal = try Journal<JournalValue, JournalValue>(at: path, configuration: JournalConfiguration(schema: old, snapshotInterval: 2))
            let system = System(journal: journal, initialState: state) { _, _ in }
            for event in events { system.send(event) }
            system.stop()
            journal.close()
        }

        let journal = try Journal<ClientState, ClientEvent>(
            at: path, configuration: JournalConfiguration(schema: ClientState.journalSchema, snapshotInterval: 200)
        )
        let migrated = journal.migration?.migrated.map { "\($0.kind) \($0.from)→\($0.to)" } ?? []
        #expect(Set(migrated) == ["the state 3→4", "the events 2→3"], "\(migrated)")
        let system = System(journal: journal, initialState: ClientState(user: "ann"), reduce: ClientState.reduce)
        #expect(system.state.driverMode.value == true)
        #expect(system.state.driverMode.confirmedVersion == Version(epoch: 7, counter: 12))
        #expect(system.state.driverMode.pendingMutations == 1)
        // The unknown ride keeps what was known (nothing), and no launch's health comes back.
        #expect(system.state.ride.value == nil)
        #expect(system.state.driverMode.health == ResourceHealth() && system.state.ride.health == ResourceHealth())
        system.stop()
        journal.close()
    }
}
