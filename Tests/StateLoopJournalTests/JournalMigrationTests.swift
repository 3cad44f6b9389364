import Foundation
import StateLoop
import StateLoopSync
import Synchronization
import TestSupport
import Testing

@testable import StateLoopJournal

/// Version 1 of a small trip feature: its state, events and mutation, as an app shipped them.
enum TripV1 {
    struct State: Codable, Equatable, Sendable {
        var pickup = ""
        var stops: [String] = []
    }

    enum Event: Codable, Equatable, Sendable {
        case setPickup(String)
        case addStop(String)
        case clearStops
    }

    static func reduce(_ state: inout State, _ event: Event) {
        switch event {
        case .setPickup(let place): state.pickup = place
        case .addStop(let place): state.stops.append(place)
        case .clearStops: state.stops = []
        }
    }

    /// Books a ride to a destination; the value is the list of booked destinations.
    struct Booking: Mutation, Equatable {
        let destination: String
        func apply(to bookings: inout [String]) { bookings.append(destination) }
    }
}

/// Version 2 of the same feature: `pickup` became `origin`, `clearStops` is gone, `setPickup`
/// became `setOrigin`, and a booking names a place rather than a string.
enum TripV2 {
    struct State: Codable, Equatable, Sendable {
        var origin = ""
        var stops: [String] = []
    }

    enum Event: Codable, Equatable, Sendable {
        case setOrigin(String)
        case addStop(String)
    }

    static func reduce(_ state: inout State, _ event: Event) {
        switch event {
        case .setOrigin(let place): state.origin = place
        case .addStop(let place): state.stops.append(place)
        }
    }

    struct Place: Codable, Equatable, Sendable {
        var name: String
    }

    struct Booking: Mutation, Equatable {
        let place: Place
        func apply(to bookings: inout [String]) { bookings.append(place.name) }
    }

    /// The migrations from version 1, written against the stored JSON.
    static var schema: JournalSchema {
        var schema = JournalSchema()
        schema.migrateState(from: 1) { state in state.renameField("pickup", to: "origin") }
        schema.migrateEvents(from: 1) { event in
            switch event.enumCase?.name {
            case "setPickup": JournalValue(case: "setOrigin", ["_0": event["setPickup"]?["_0"] ?? ""])
            case "clearStops": nil
            default: event
            }
        }
        schema.migrateMutations(of: "bookings", from: 1) { booking in
            ["place": ["name": booking["destination"] ?? ""]]
        }
        return schema
    }
}

/// A server that applies each booking id once, and can be offline.
final class BookingServer: Sendable {
    private struct State {
        var bookings: [String] = ["home"]
        var counter: UInt64 = 1
        var applied: [MutationID: UInt64] = [:]
        var received: [MutationID] = []
        var online = false
    }

    private let state = Mutex(State())

    var received: [MutationID] { state.withLock { $0.received } }
    var bookings: [String] { state.withLock { $0.bookings } }

    func setOnline(_ online: Bool) {
        state.withLock { $0.online = online }
    }

    func pull() throws -> Versioned<[String]> {
        try state.withLock { state in
            guard state.online else { throw HTTPStatusError(status: 503) }
            return Versioned(state.bookings, version: Version(counter: state.counter))
        }
    }

    func send(_ booking: TripV2.Booking, _ id: MutationID) throws -> Version {
        try state.withLock { state in
            guard state.online else { throw HTTPStatusError(status: 503) }
            state.received.append(id)
            if let counter = state.applied[id] { return Version(counter: counter) }
            state.bookings.append(booking.place.name)
            state.counter += 1
            state.applied[id] = state.counter
            return Version(counter: state.counter)
        }
    }
}

@Suite("Journal: migrations across app versions", .timeLimit(.minutes(4)))
struct JournalMigrationTests {
    static var policy: ResourcePolicy {
        var policy = ResourcePolicy()
        policy.pollInterval = nil
        policy.maxRetries = 0
        return policy
    }

    /// Version 1 of the app: journals a trip (a snapshot and a tail), and two bookings made
    /// offline, the first of them sent but never answered, when the app is killed.
    @MainActor
    static func runVersion1(at path: String) async throws -> [MutationID] {
        let journal = try Journal<TripV1.State, TripV1.Event>(at: path, configuration: JournalConfiguration(snapshotInterval: 3))
        let system = System(journal: journal, initialState: TripV1.State(), reduce: TripV1.reduce)
        let events: [TripV1.Event] = [
            .setPickup("home"), .addStop("bakery"), .addStop("mall"),  // saved at 3
            .setPickup("work"), .addStop("park"), .addStop("gym"),  // saved at 6
            .clearStops, .addStop("pool"),  // the tail
        ]
        for event in events {
            system.send(event)
        }
        #expect(journal.health.snapshotSequence == 6)
        system.stop()

        let store = journal.mutationStore(named: "bookings", for: TripV1.Booking.self)
        try await store.saveConfirmed(Versioned(["home"], version: Version(counter: 1)))
        let bookings = RemoteResource<[String]>(
            sources: ResourceSources(pull: { throw HTTPStatusError(status: 503) }), policy: policy
        )
        let never = Gate()
        let resource = OptimisticResource(resource: bookings, store: store, policy: policy) { _, _ in
            await never.wait()
            return Version(counter: 0)
        }
        let ids = [resource.mutate(TripV1.Booking(destination: "airport")), resource.mutate(TripV1.Booking(destination: "station"))]
        #expect(
            await eventually { (try? await store.load().map { "\($0.id) \($0.status)" }) == ["\(ids[0]) sent", "\(ids[1]) pending"] },
            "the bookings were not saved"
        )
        resource.stop()
        bookings.stop()
        journal.close()
        return ids
    }

    @Test("v1 journals a trip and two offline bookings; v2 migrates them, shows them offline, then sends both once, in order, with their ids")
    func upgradeEndToEnd() async throws {
        let folder = TemporaryFolder()
        let ids = try await Self.runVersion1(at: folder.journal)

        let journal = try Journal<TripV2.State, TripV2.Event>(
            at: folder.journal, configuration: JournalConfiguration(schema: TripV2.schema, snapshotInterval: 3)
        )
        #expect(
            journal.migration?.migrated.map { "\($0.kind) \($0.from)→\($0.to)" } == [
                "the state 1→2", "the events 1→2", "the mutations of store \"bookings\" 1→2",
            ])
        // The tail after the state saved at event 6 held `clearStops`, a case v2 dropped.
        #expect(journal.migration?.droppedEvents == 1)
        let state = await MainActor.run {
            let system = System(journal: journal, initialState: TripV2.State(), reduce: TripV2.reduce)
            defer { system.stop() }
            return system.state
        }
        #expect(state == TripV2.State(origin: "work", stops: ["bakery", "mall", "park", "gym", "pool"]))

        let server = BookingServer()
        let bookings = RemoteResource(sources: ResourceSources(pull: { try server.pull() }), policy: Self.policy)
        let gate = Gate()
        let resource = OptimisticResource(
            resource: bookings,
            store: journal.mutationStore(named: "bookings", for: TripV2.Booking.self),
            policy: Self.policy
        ) { booking, id in
            await gate.wait()
            return try server.send(booking, id)
        }
        let offline = await firstElement(of: resource.updates(), where: { $0.value == ["home", "airport", "station"] })
        #expect(offline != nil, "the migrated bookings were not shown offline")
        #expect(offline?.mutations.map(\.id) == ids)

        server.setOnline(true)
        await gate.open()
        #expect(await eventually { server.received.count == 2 }, "sent: \(server.received)")
        bookings.refresh()
        let settled = await firstElement(of: resource.updates()) { $0.value == ["home", "airport", "station"] && $0.mutations.isEmpty }
        #expect(settled != nil, "the bookings never settled")
        #expect(server.received == ids)
        #expect(server.bookings == ["home", "airport", "station"])
        resource.stop()
        bookings.stop()
        journal.close()
    }

    @Test("events are migrated in order through every step; a dropped case is left out of the replay; a second open migrates nothing")
    func chainedSteps() async throws {
        let folder = TemporaryFolder()
        let path = folder.journal
        try await MainActor.run { try write([.add(1), .note("a"), .add(2), .note("b"), .add(3)], to: path) }
        var schema = JournalSchema()
        // 1→2: notes are dropped; 2→3: every addition doubles. Run in that order, a note never
        // reaches step 2.
        schema.migrateEvents(from: 1) { $0.enumCase?.name == "note" ? nil : $0 }
        let seen = Mutex<[String]>([])
        schema.migrateEvents(from: 2) { event in
            seen.withLock { $0.append(event.enumCase?.name ?? "?") }
            guard let value = event["add"]?["_0"]?.integerValue else { return event }
            return JournalValue(case: "add", ["_0": .integer(value * 2)])
        }
        let configuration = JournalConfiguration(schema: schema, snapshotInterval: nil)
        let (state, recovery) = try await MainActor.run { try restore(path, configuration: configuration) }
        #expect(state == Tally.folding([2, 4, 6]))
        #expect(recovery == .restored(snapshotSequence: nil, replayedEvents: 3))
        #expect(seen.withLock { $0 } == ["add", "add", "add"])

        let again = try Journal<Tally, TallyEvent>(at: folder.journal, configuration: configuration)
        #expect(again.migration == nil)
        again.close()
        #expect(seen.withLock { $0 }.count == 3)
    }

    @Test("a journal from a newer app, or with no migration path, is set aside naming both versions; with .fail it is left byte for byte")
    func unmigratable() async throws {
        let folder = TemporaryFolder()
        let path = folder.journal
        try await MainActor.run { try write([.add(1)], to: path, configuration: JournalConfiguration(schema: .versions(3), snapshotInterval: nil)) }
        let before = try Data(contentsOf: URL(fileURLWithPath: folder.journal))

        #expect(throws: JournalError.newerSchema(path: folder.journal, kind: .events, stored: 3, expected: 2)) {
            _ = try Journal<Tally, TallyEvent>(at: folder.journal, configuration: JournalConfiguration(schema: .versions(2), unreadable: .fail))
        }
        var gap = JournalSchema()
        gap.migrateEvents(from: 4) { $0 }  // version 5, with no step from 3
        #expect(throws: JournalError.noMigrationPath(path: folder.journal, kind: .events, stored: 3, expected: 5)) {
            _ = try Journal<Tally, TallyEvent>(at: folder.journal, configuration: JournalConfiguration(schema: gap, unreadable: .fail))
        }
        #expect(try Data(contentsOf: URL(fileURLWithPath: folder.journal)) == before)
        #expect(folder.files() == ["tally.journal"])

        let journal = try Journal<Tally, TallyEvent>(at: folder.journal, configuration: JournalConfiguration(schema: gap))
        guard case .startedFresh(let error, let setAside) = journal.recovery else {
            Issue.record("expected the journal to be set aside, got \(journal.recovery)")
            return
        }
        #expect(error.description.contains("version 3") && error.description.contains("version 5"))
        #expect(try Data(contentsOf: URL(fileURLWithPath: setAside)) == before)
        journal.close()
    }

    @Test("a migration that throws, or whose result does not decode, leaves the journal as it was; a fixed one then migrates it")
    func failedMigrationRollsBack() async throws {
        let folder = TemporaryFolder()
        let path = folder.journal
        try await MainActor.run { try write((1...50).map(TallyEvent.add), to: path) }
        let before = try Data(contentsOf: URL(fileURLWithPath: folder.journal))

        struct Refused: Error {}
        var throwing = JournalSchema()
        throwing.migrateEvents(from: 1) { event in
            if event["add"]?["_0"]?.integerValue == 40 { throw Refused() }
            return event
        }
        #expect {
            _ = try Journal<Tally, TallyEvent>(at: folder.journal, configuration: JournalConfiguration(schema: throwing, unreadable: .fail))
        } throws: { error in
            guard case JournalError.migrationFailed(_, .events, from: 1, let detail) = error else { return false }
            return detail.contains("event 40")
        }
        var undecodable = JournalSchema()
        undecodable.migrateEvents(from: 1) { _ in ["nonsense": 1] }
        #expect {
            _ = try Journal<Tally, TallyEvent>(at: folder.journal, configuration: JournalConfiguration(schema: undecodable, unreadable: .fail))
        } throws: { error in
            if case JournalError.undecodableEvent(_, 1, 2, _) = error { true } else { false }
        }
        #expect(try Data(contentsOf: URL(fileURLWithPath: folder.journal)) == before)

        var fixed = JournalSchema()
        fixed.migrateEvents(from: 1) { $0 }
        let (state, _) = try await MainActor.run { try restore(path, configuration: JournalConfiguration(schema: fixed, snapshotInterval: nil)) }
        #expect(state == Tally.folding(1...50))
    }

    @Test("a store first written under version 3 records it: the next version's migration starts from 3, not 1")
    func newStoreRecordsItsVersion() async throws {
        let folder = TemporaryFolder()
        var v3 = JournalSchema()
        v3.setVersion(3, of: .mutations(store: "bookings"))
        let pending = PendingMutation(TripV2.Booking(place: TripV2.Place(name: "airport")))
        do {
            let journal = try Journal<Tally, TallyEvent>(at: folder.journal, configuration: JournalConfiguration(schema: v3))
            try await journal.mutationStore(named: "bookings", for: TripV2.Booking.self).save([pending])
            journal.close()
        }
        var v4 = v3
        let steps = Mutex<[Int]>([])
        v4.migrateMutations(of: "bookings", from: 3) { booking in
            steps.withLock { $0.append(3) }
            var booking = booking
            booking["place"]?["name"] = "terminal 2"
            return booking
        }
        let journal = try Journal<Tally, TallyEvent>(at: folder.journal, configuration: JournalConfiguration(schema: v4))
        let loaded = try await journal.mutationStore(named: "bookings", for: TripV2.Booking.self).load()
        #expect(loaded.map(\.id) == [pending.id])
        #expect(loaded.map(\.mutation.place.name) == ["terminal 2"])
        #expect(steps.withLock { $0 } == [3])
        journal.close()
    }

    @Test("a pending mutation dropped by a migration, or that no longer decodes, is reported through refusals(), once, and kept in the file")
    func droppedMutationsAreReported() async throws {
        let folder = TemporaryFolder()
        let kept = PendingMutation(TripV1.Booking(destination: "airport"))
        let dropped = PendingMutation(TripV1.Booking(destination: "nowhere"))
        let broken = PendingMutation(TripV1.Booking(destination: "broken"))
        do {
            let journal = try Journal<Tally, TallyEvent>(at: folder.journal)
            try await journal.mutationStore(named: "bookings", for: TripV1.Booking.self).save([kept, dropped, broken])
            journal.close()
        }
        var schema = JournalSchema()
        schema.migrateMutations(of: "bookings", from: 1) { booking in
            switch booking["destination"]?.stringValue {
            case "nowhere": nil
            case "broken": ["place": 12]  // a migration with a bug: does not decode as a booking
            default: ["place": ["name": booking["destination"] ?? ""]]
            }
        }
        let journal = try Journal<Tally, TallyEvent>(at: folder.journal, configuration: JournalConfiguration(schema: schema))
        #expect(journal.migration?.droppedMutations == 1)
        let never = Gate()
        let bookings = RemoteResource<[String]>(
            sources: ResourceSources(pull: { throw HTTPStatusError(status: 503) }), policy: Self.policy
        )
        let resource = OptimisticResource(
            resource: bookings,
            store: journal.mutationStore(named: "bookings", for: TripV2.Booking.self),
            policy: Self.policy
        ) { _, _ in
            await never.wait()
            return Version(counter: 0)
        }
        let failures = Mutex<[RefusedMutation<TripV2.Booking>]>([])
        let collector = Task {
            for await failure in resource.refusals() { failures.withLock { $0.append(failure) } }
        }
        #expect(await eventually { failures.withLock { $0.count } == 2 }, "reported: \(failures.withLock { $0 })")
        collector.cancel()
        let reported = failures.withLock { $0 }
        #expect(reported.map(\.id) == [dropped.id, broken.id])
        #expect(reported.allSatisfy { $0.mutation == nil && $0.error.kind == .unrecoverable })
        #expect(reported.first?.error.message.contains("migration") == true)
        #expect(reported.last?.error.message.contains("no longer decodes") == true)
        let status = await firstElement(of: resource.updates(), where: { _ in true })
        #expect(status?.mutations.map(\.id) == [kept.id])
        resource.stop()
        bookings.stop()

        // Reported once; the rows stay in the file for support.
        let store = journal.mutationStore(named: "bookings", for: TripV2.Booking.self)
        #expect(try await store.takeDropped().isEmpty)
        #expect(try journal.database.write { db in try Int.fetchOne(db, sql: "SELECT COUNT(*) FROM journal_dropped") } == 2)
        journal.close()
    }

    @Test("a journal written before versions were kept per kind is read as its app version, and migrated from it")
    func legacyVersionKey() async throws {
        let folder = TemporaryFolder()
        let path = folder.journal
        try await MainActor.run { try write([.add(1), .add(2)], to: path) }
        do {
            let database = try JournalDatabase(path: folder.journal, durability: .processCrash)
            try database.write { db in
                try db.execute(sql: "DELETE FROM journal_meta WHERE key LIKE 'schema:%'")
                try db.execute(sql: "INSERT INTO journal_meta (key, value) VALUES ('version', 2)")
            }
            database.close()
        }
        var schema = JournalSchema.versions(2)
        schema.migrateEvents(from: 2) { event in
            guard let value = event["add"]?["_0"]?.integerValue else { return event }
            return JournalValue(case: "add", ["_0": .integer(value + 10)])
        }
        let (state, _) = try await MainActor.run { try restore(path, configuration: JournalConfiguration(schema: schema, snapshotInterval: nil)) }
        #expect(state == Tally.folding([11, 12]))
    }

    @Test("the stored tree keeps numbers exact: a UInt64 checksum and a large Int64 survive a migration")
    func exactNumbers() throws {
        let value: JournalValue = ["big": .unsignedInteger(UInt64.max), "negative": .integer(Int64.min), "half": 0.5, "flag": true, "none": .null]
        let decoded = try JSONDecoder().decode(JournalValue.self, from: JSONEncoder().encode(value))
        #expect(decoded == value)
        let tally = Tally.folding(1...1_000)
        let tree = try JSONDecoder().decode(JournalValue.self, from: JSONEncoder().encode(tally))
        #expect(try JSONDecoder().decode(Tally.self, from: JSONEncoder().encode(tree)) == tally)
    }

    @Test("a file of format 1 (one row per event, from an earlier StateLoopJournal) is rewritten in the current format and restores the same state")
    func formatOneUpgraded() async throws {
        let folder = TemporaryFolder()
        let events: [TallyEvent] = (1...20).map(TallyEvent.add) + [.note("kept")]
        do {
            let database = try JournalDatabase(path: folder.journal, durability: .processCrash)
            let encoder = JSONEncoder()
            try database.write { db in
                try db.execute(
                    sql: """
                        CREATE TABLE journal_meta (key TEXT PRIMARY KEY NOT NULL, value INTEGER NOT NULL);
                        CREATE TABLE journal_events (sequence INTEGER PRIMARY KEY NOT NULL, payload BLOB NOT NULL);
                        CREATE TABLE journal_snapshot (
                            id INTEGER PRIMARY KEY NOT NULL CHECK (id = 1),
                            sequence INTEGER NOT NULL, version INTEGER NOT NULL, payload BLOB NOT NULL);
                        CREATE TABLE journal_mutations (
                            store TEXT NOT NULL, position INTEGER NOT NULL, payload BLOB NOT NULL,
                            PRIMARY KEY (store, position));
                        CREATE TABLE journal_confirmed (store TEXT PRIMARY KEY NOT NULL, payload BLOB NOT NULL);
                        INSERT INTO journal_meta (key, value) VALUES ('version', 1), ('clean', 1);
                        PRAGMA user_version = 1;
                        """
                )
                for (index, event) in events.enumerated() {
                    try db.execute(
                        sql: "INSERT INTO journal_events (sequence, payload) VALUES (?, ?)",
                        arguments: [index + 1, try encoder.encode(event)]
                    )
                }
            }
            database.close()
        }
        let path = folder.journal
        let (state, recovery) = try await MainActor.run { try restore(path) }
        var expected = Tally.folding(1...20)
        expected.note = "kept"
        #expect(state == expected)
        #expect(recovery == .restored(snapshotSequence: nil, replayedEvents: 21))
        let database = try JournalDatabase(path: folder.journal, durability: .processCrash)
        #expect(try database.inspect() == JournalDatabase.format)
        #expect(try database.write { db in try db.tableExists("journal_events") } == false)
        database.close()
        // And it goes on from there: the next events follow the upgraded ones.
        try await MainActor.run { try write([.add(21)], to: path) }
        let (after, _) = try await MainActor.run { try restore(path) }
        #expect(after.count == 21 && after.note == "kept")
    }
}
