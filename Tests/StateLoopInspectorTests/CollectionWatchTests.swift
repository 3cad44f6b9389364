import Foundation
import InspectorTestSupport
@_spi(Benchmarks) import StateLoopCollections
import StateLoopInspector
import StateLoopInspectorCollections
import StateLoopInspectorWire
import StateLoopSync
import StateLoopTesting
import Synchronization
import TestSupport
import Testing

/// A local collection watched by the inspector: its subscriptions' answers (applied or set
/// aside) and statuses, the rows they drop and its changes' steps recorded, by ids and counts,
/// without the watch changing what the collection does.
@Suite("inspector: collections", .timeLimit(.minutes(4)))
struct CollectionWatchTests {
    struct TaskRow: Codable, Sendable, Hashable {
        var id: String
        var title: String
    }

    /// A change to a task, with a field the app names secret.
    struct Rename: RowMutation, Equatable {
        var id: String
        var title: String
        var secret: String

        func apply(to rows: inout RowEdits<TaskRow>) {
            rows[id]?.title = title
        }
    }

    static let tasks = RowCollection("tasks", of: TaskRow.self) { $0.id }

    static func rows(_ ids: [String], counter: UInt64 = 1) -> [VersionedRow<TaskRow>] {
        ids.map { VersionedRow(id: $0, version: Version(epoch: 1, counter: counter), value: TaskRow(id: $0, title: "title of \($0)")) }
    }

    /// The collection records of `inspector` about the subscription `key`.
    static func subscriptionRecords(_ inspector: Inspector, _ key: String) -> [InspectorRecord] {
        inspector.session().records.filter { $0.kind == .resource && $0.subscription == key }
    }

    @Test("answers applied and set aside are recorded by their counts and at most 20 ids, with the subscription's cookie and last outcome")
    func answers() async throws {
        let store = try LocalStore.inMemory(clock: TestClock())
        let collection = store.collection(Self.tasks, mutations: Rename.self)
        let inspector = Inspector(app: "Board")
        inspector.watch(collection, named: "board")
        try collection.record("tasks/all")
        let first = RowsDifference(cookie: "1.5.q", replace: true, rows: Self.rows((0..<25).map { "t\($0)" }), removed: [])
        #expect(try collection.apply(first, requestedWith: nil, to: "tasks/all") == .applied)
        let next = RowsDifference(cookie: "1.6.q", replace: false, rows: Self.rows(["n1", "n2"], counter: 2), removed: ["t0"], lastMutationID: 4)
        #expect(try collection.apply(next, requestedWith: "1.5.q", to: "tasks/all") == .applied)
        let older = RowsDifference(cookie: "1.4.q", replace: true, rows: Self.rows(["t1"]), removed: [])
        #expect(try collection.apply(older, requestedWith: nil, to: "tasks/all") == .outdated)
        let elsewhere = RowsDifference(cookie: "1.8.q", replace: false, rows: Self.rows(["n3"], counter: 3), removed: [])
        #expect(try collection.apply(elsewhere, requestedWith: "1.7.q", to: "tasks/all") == .needsCatchUp)

        #expect(
            await eventually(within: .seconds(10)) { Self.subscriptionRecords(inspector, "tasks/all").count == 4 },
            "\(Self.subscriptionRecords(inspector, "tasks/all"))")
        let records = Self.subscriptionRecords(inspector, "tasks/all")
        #expect(records.allSatisfy { $0.system == "board" && $0.collection == "tasks" })
        #expect(records.map(\.outcome) == ["applied", "applied", "outdated", "needsCatchUp"])
        let answers = records.map { record in Self.fields(record.event) }
        #expect(answers[0]["replace"] == .bool(true) && answers[0]["rowCount"] == .number(25))
        #expect(answers[0]["rows"] == .array((0..<20).map { .string("t\($0)") }), "the ids are not capped at 20")
        #expect(answers[1]["replace"] == .bool(false) && answers[1]["rowCount"] == .number(2))
        #expect(answers[1]["removed"] == .array([.string("t0")]) && answers[1]["lastMutationID"] == .number(4))
        // Where the subscription stands: the cookie of the last answer applied, whatever was set aside since.
        let statuses = records.map { record in Self.fields(record.status) }
        #expect(statuses.map { $0["cookie"] } == [.string("1.5.q"), .string("1.6.q"), .string("1.6.q"), .string("1.6.q")])
        #expect(statuses.map { $0["outcome"] } == [.string("applied"), .string("applied"), .string("outdated"), .string("needsCatchUp")])
        // Ids and counts only: no row's value leaves the app.
        let session = String(decoding: try JSONEncoder().encode(inspector.session()), as: UTF8.self)
        #expect(!session.contains("title of"), "a row's value was recorded")
    }

    @Test("a subscription's statuses, as they change, and the rows it drops when the app ends it")
    func subscriptionStatuses() async throws {
        let store = try LocalStore.inMemory(clock: TestClock())
        let collection = store.collection(Self.tasks, mutations: Rename.self)
        let inspector = Inspector(app: "Board")
        inspector.watch(collection, named: "board")
        let (events, socket) = AsyncStream.makeStream(of: RowsPushEvent<TaskRow>.self)
        let source = RowSource<TaskRow>(
            key: "tasks/open",
            fetch: { _, _ in RowsDifference(cookie: "1.5.q", replace: true, rows: Self.rows(["a", "b"]), removed: []) },
            push: { _, cookie, receive in
                await receive(.opened(cookie: cookie()))
                for await event in events { await receive(event) }
            })
        let subscription = collection.subscribe(source)
        #expect(await eventually(within: .seconds(10)) { subscription.status == .live })
        socket.yield(.closed)
        #expect(await eventually(within: .seconds(10)) { subscription.status == .connecting })
        try subscription.end()
        socket.finish()

        let expected = 4  // the first sync's answer, live, connecting, the rows dropped
        #expect(
            await eventually(within: .seconds(10)) { Self.subscriptionRecords(inspector, "tasks/open").count == expected },
            "\(Self.subscriptionRecords(inspector, "tasks/open"))")
        let records = Self.subscriptionRecords(inspector, "tasks/open")
        let statuses = records.map { Self.fields($0.status) }
        #expect(statuses.map { $0["status"] } == [.null, .string("live"), .string("connecting"), .string("ended")], "\(statuses)")
        #expect(statuses[1]["cookie"] == .string("1.5.q") && statuses[1]["outcome"] == .string("applied"))
        #expect(records[0].outcome == "applied" && Self.fields(records[0].event)["rowCount"] == .number(2))
        #expect(records[3].event == .object(["dropped": .string("ended")]))
        #expect(statuses[3]["cookie"] == .null)
    }

    @Test("a change's steps: queued, accepted, confirmed; a refused one refused with the server's reason; each redacted")
    func changeSteps() async throws {
        let store = try LocalStore.inMemory(clock: TestClock())
        let collection = store.collection(Self.tasks, mutations: Rename.self) { change, _ in
            if change.title == "refused" { throw HTTPStatusError(status: 422) }
            return Version(epoch: 1, counter: 2)
        }
        let inspector = Inspector(app: "Board", redacting: ["secret"])
        inspector.watch(collection, named: "board")
        try collection.mutate(Rename(id: "a", title: "kept", secret: "hunter2"))
        try collection.mutate(Rename(id: "a", title: "refused", secret: "hunter2"))

        let steps = { inspector.session().records.filter { $0.kind == .mutation } }
        #expect(await eventually(within: .seconds(10)) { steps().count == 5 }, "\(steps().map { "\($0.mutation ?? "?") \($0.outcome ?? "?")" })")
        let first = MutationID(client: store.clientID, sequence: 1).rawValue
        let second = MutationID(client: store.clientID, sequence: 2).rawValue
        #expect(steps().filter { $0.mutation == first }.map(\.outcome) == ["queued", "accepted", "confirmed"])
        #expect(steps().filter { $0.mutation == second }.map(\.outcome) == ["queued", "refused"])
        #expect(steps().first { $0.outcome == "refused" }?.reason == "HTTP 422")
        #expect(steps().allSatisfy { $0.system == "board" && $0.collection == "tasks" })
        // Every step carries the change, its secret redacted.
        #expect(steps().allSatisfy { Self.fields($0.event)["secret"] == .string(Redaction.placeholder) }, "\(steps().map(\.event))")
        #expect(Self.fields(steps().last?.event)["title"] == .string("refused"))
        #expect(collection.pendingCount == 0)
    }

    @Test("the watch holds neither the collection nor the inspector")
    func lifetimes() throws {
        let store = try LocalStore.inMemory(clock: TestClock())
        var collection: LocalCollection<TaskRow, Rename>? = store.collection(Self.tasks, mutations: Rename.self)
        var inspector: Inspector? = Inspector(app: "Board")
        inspector?.watch(collection!, named: "board")
        weak let releasedCollection = collection
        weak let releasedInspector = inspector
        collection = nil
        inspector = nil
        #expect(releasedCollection == nil, "the watch keeps the collection alive")
        #expect(releasedInspector == nil, "the watch keeps the inspector alive")
    }

    @Test("a collection's records reach the page with the collection, the subscription and the answer's counts")
    @MainActor
    func onThePage() async throws {
        try await withInspectorServer { server in
            let store = try LocalStore.inMemory(clock: TestClock())
            let collection = store.collection(Self.tasks, mutations: Rename.self)
            let inspector = Inspector(app: "Board")
            inspector.watch(collection, named: "board")
            inspector.connect(to: try #require(server.appURL), logger: quiet)
            defer { inspector.disconnect() }
            let page = TestPage(url: try pageSocket(server))
            defer { page.close() }
            try collection.record("tasks/all")
            try collection.apply(
                RowsDifference(cookie: "1.5.q", replace: true, rows: Self.rows(["a", "b", "c"]), removed: []), requestedWith: nil, to: "tasks/all")
            let app = try await firstApp(on: page)
            #expect(await eventually(within: .seconds(10)) { !page.records(of: app).isEmpty }, "no record reached the page")
            let record = try #require(page.records(of: app).first)
            #expect(record.kind == .resource && record.system == "board")
            #expect(record.collection == "tasks" && record.subscription == "tasks/all" && record.outcome == "applied")
            #expect(Self.fields(record.event)["rowCount"] == .number(3))
        }
    }

    static func fields(_ value: JSONValue?) -> [String: JSONValue] {
        if case .object(let fields)? = value { fields } else { [:] }
    }
}
