import Foundation
import GRDB
import StateLoopSync
import StateLoopWire
import Synchronization
import TestSupport
import Testing

@_spi(Benchmarks) @testable import StateLoopCollections

/// The local store's rules for answers, shared rows and pending changes, without a server.
@Suite struct LocalCollectionTests {
    typealias TaskRow = Board.TaskRow
    typealias TaskMutation = Board.TaskMutation

    private func collection(_ store: LocalStore? = nil) throws -> (LocalStore, LocalCollection<TaskRow, TaskMutation>) {
        let store = try store ?? LocalStore.inMemory()
        return (store, store.collection(Board.tasks, mutations: TaskMutation.self))
    }

    /// The path of a store file in a new folder named after `prefix`, which the caller removes.
    private func storeFile(_ prefix: String) throws -> (folder: URL, path: String) {
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("\(prefix)-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        return (folder, folder.appendingPathComponent("store.sqlite").path)
    }

    private func replace(_ rows: [TaskRow], at position: UInt64, counter: UInt64 = 1, lastMutationID: UInt64? = nil) -> RowsDifference<TaskRow> {
        RowsDifference(
            cookie: Board.cookie(position), replace: true, rows: Board.versioned(rows, counter: counter), removed: [], lastMutationID: lastMutationID)
    }

    @Test func answersFollowTheProtocol() throws {
        let (_, tasks) = try collection()
        let live = tasks.live(Board.project("p1"))
        try tasks.record("s")
        #expect(try tasks.apply(replace([Board.task("a", at: 1), Board.task("b", at: 2)], at: 5), requestedWith: nil, to: "s") == .applied)
        #expect(live.rows.map(\.id) == ["a", "b"])
        // An older whole result is dropped: never an older screen.
        #expect(try tasks.apply(replace([Board.task("a", at: 1)], at: 4), requestedWith: nil, to: "s") == .outdated)
        // A difference relative to a cookie not held is refused: the caller catches up.
        let moved = RowsDifference(
            cookie: Board.cookie(7), replace: false, rows: Board.versioned([Board.task("c", at: 0)], counter: 2), removed: ["a"])
        #expect(try tasks.apply(moved, requestedWith: Board.cookie(6), to: "s") == .needsCatchUp)
        #expect(live.rows.map(\.id) == ["a", "b"])
        // Relative to the cookie held: applied.
        #expect(try tasks.apply(moved, requestedWith: Board.cookie(5), to: "s") == .applied)
        #expect(live.rows.map(\.id) == ["c", "b"])
        // Applied twice: refused, nothing applied twice.
        #expect(try tasks.apply(moved, requestedWith: Board.cookie(5), to: "s") == .needsCatchUp)
    }

    /// A live query's window is read through the query's own index, in its order: SQLite's
    /// planner, left to choose, took the table's key and sorted every row of the collection at
    /// each read (a first sync re-reads a screen's window at every page).
    @Test func aWindowIsReadThroughItsIndexWithoutASort() throws {
        let (store, tasks) = try collection()
        try tasks.record("s")
        try tasks.apply(replace((0..<50).map { Board.task("t\($0)", at: 50 - $0) }, at: 5), requestedWith: nil, to: "s")
        for query in [Board.project("p1", limit: 10), RowQuery(orderedBy: [.init("position")], limit: 10)] {
            let live = tasks.live(query)
            #expect(live.rows.count == 10)
            let (sql, arguments) = tasks.select(query)
            let plan = try store.read { db in
                try GRDB.Row.fetchAll(db, sql: "EXPLAIN QUERY PLAN " + sql, arguments: arguments).map { $0["detail"] as String }
            }
            #expect(plan.contains { $0.contains("USING INDEX") }, "\(plan)")
            #expect(!plan.contains { $0.contains("TEMP B-TREE") }, "sorted: \(plan)")
        }
    }

    /// A page of a whole result asked for by pages.
    private func page(_ rows: [TaskRow], at position: UInt64, next: String?, lastMutationID: UInt64? = nil) -> RowsDifference<TaskRow> {
        RowsDifference(
            cookie: Board.cookie(position), replace: true, rows: Board.versioned(rows, counter: position), removed: [],
            lastMutationID: lastMutationID, next: next)
    }

    /// A first sync's pages are shown as they come, but the subscription takes no cookie until
    /// the last page, and then the first page's (with its lastMutationID): changes committed
    /// while the later pages were read are after it. The last page takes off the rows that an
    /// earlier attempt's pages brought and this attempt's did not (an attempt cut short by a
    /// crash, the row deleted since). A page for a subscription that meanwhile holds a cookie is
    /// set aside.
    @Test func pagesAreShownAndCompleteAtTheLast() throws {
        let (_, tasks) = try collection()
        try tasks.record("s")
        let live = tasks.live(Board.project("p1"))
        // An attempt cut short after its first page: the rows stay, no cookie.
        var cut = PagedSync()
        #expect(try tasks.apply(page: page([Board.task("a", at: 1), Board.task("x", at: 9)], at: 3, next: "x"), of: &cut, to: "s") == .applied)
        #expect(live.rows.map(\.id) == ["a", "x"])
        #expect(tasks.cookie(of: "s") == nil)
        // The next attempt: x is gone on the server.
        var sync = PagedSync()
        #expect(try tasks.apply(page: page([Board.task("a", at: 1)], at: 5, next: "a", lastMutationID: 4), of: &sync, to: "s") == .applied)
        #expect(tasks.cookie(of: "s") == nil)
        #expect(
            try tasks.apply(page: page([Board.task("c", at: 3), Board.task("d", at: 2)], at: 6, next: "d", lastMutationID: 5), of: &sync, to: "s")
                == .applied)
        #expect(live.rows.map(\.id) == ["a", "d", "c", "x"], "a page is shown as it comes")
        #expect(try tasks.apply(page: page([Board.task("e", at: 0)], at: 7, next: nil, lastMutationID: 6), of: &sync, to: "s") == .applied)
        #expect(live.rows.map(\.id) == ["e", "a", "d", "c"], "x, brought by no page of the attempt that ended, is taken off")
        #expect(tasks.cookie(of: "s") == Board.cookie(5), "the first page's cookie: the changes made while the others were read follow it")
        // Caught up from the first page's cookie: relative to it, a difference applies.
        let since = RowsDifference<TaskRow>(cookie: Board.cookie(8), replace: false, rows: [], removed: ["c"])
        #expect(try tasks.apply(since, requestedWith: Board.cookie(5), to: "s") == .applied)
        #expect(live.rows.map(\.id) == ["e", "a", "d"])
        // A late page of another attempt finds a cookie held: set aside.
        var late = PagedSync()
        #expect(try tasks.apply(page: page([Board.task("z", at: 1)], at: 9, next: nil), of: &late, to: "s") == .outdated)
        #expect(live.rows.map(\.id) == ["e", "a", "d"])
    }

    /// Two subscriptions hold one row: it is kept once, at its newest version, and stays while
    /// either holds it.
    @Test func overlappingSubscriptionsShareRows() throws {
        let (_, tasks) = try collection()
        for key in ["one", "two"] { try tasks.record(key) }
        let live = tasks.live(Board.project("p1"))
        try tasks.apply(replace([Board.task("a", at: 1, title: "new")], at: 9, counter: 5), requestedWith: nil, to: "one")
        // The other subscription's answer is older for that row: the newer row stays.
        try tasks.apply(replace([Board.task("a", at: 1, title: "old"), Board.task("b", at: 2)], at: 3, counter: 2), requestedWith: nil, to: "two")
        #expect(live.rows.map(\.title) == ["new", "b"])
        // One subscription lets the row go: the other still holds it.
        try tasks.apply(
            RowsDifference(cookie: Board.cookie(10), replace: false, rows: [], removed: ["a"]), requestedWith: Board.cookie(9), to: "one")
        #expect(live.rows.map(\.id) == ["a", "b"])
        // Ending the other takes it off the device.
        try tasks.drop("two", refused: false)
        #expect(live.rows.isEmpty)
        #expect(try tasks.row("a") == nil)
    }

    /// A change is shown at once, stays until every subscription's rows contain it, and a
    /// refused one is taken off alone.
    @Test func pendingChangesStayUntilEverySubscriptionHasThem() throws {
        let (store, tasks) = try collection()
        for key in ["one", "two"] { try tasks.record(key) }
        let live = tasks.live(Board.project("p1"))
        try tasks.apply(replace([Board.task("a", at: 1)], at: 1), requestedWith: nil, to: "one")
        try tasks.apply(replace([], at: 1), requestedWith: nil, to: "two")
        try tasks.mutate(.rename(id: "a", title: "renamed"))
        try tasks.mutate(.put(Board.task("b", at: 2)))
        #expect(live.rows.map(\.title) == ["renamed", "b"])
        #expect(tasks.pendingCount == 2)
        // The server refuses the first: taken off alone, the second stays.
        try tasks.refused(1, id: MutationID(client: store.clientID, sequence: 1), error: HTTPStatusError(status: 409))
        #expect(live.rows.map(\.title) == ["a", "b"])
        // The second reaches subscription one only: still shown on top, once.
        try tasks.apply(
            RowsDifference(
                cookie: Board.cookie(2), replace: false, rows: Board.versioned([Board.task("b", at: 2)], counter: 2), removed: [], lastMutationID: 2),
            requestedWith: Board.cookie(1), to: "one")
        #expect(tasks.pendingCount == 1)
        #expect(live.rows.map(\.id) == ["a", "b"])
        // Subscription two learns it too (an empty difference): the change is no longer shown
        // on top (the row is shown once, as the server holds it), and leaves the queue with the
        // server's answer, slower here than the sockets.
        try tasks.apply(
            RowsDifference(cookie: Board.cookie(2), replace: false, rows: [], removed: [], lastMutationID: 2), requestedWith: Board.cookie(1),
            to: "two")
        #expect(live.rows.map(\.id) == ["a", "b"])
        #expect(tasks.pendingCount == 1)
        try tasks.accepted(2)
        #expect(tasks.pendingCount == 0)
    }

    /// A row that left the device (it left the last query holding it, or was deleted) does not
    /// come back at a version no later than it had, from a subscription behind the one that
    /// took it off; a later version does come in. The departed row is forgotten once every
    /// subscription's cookie is past its departure.
    @Test func aDepartedRowDoesNotComeBackOlder() throws {
        let (store, tasks) = try collection()
        for key in ["ahead", "behind"] { try tasks.record(key) }
        let live = tasks.live(Board.project("p1"))
        try tasks.apply(replace([Board.task("r", at: 1)], at: 5, counter: 5), requestedWith: nil, to: "ahead")
        try tasks.apply(replace([], at: 4), requestedWith: nil, to: "behind")
        try tasks.apply(
            RowsDifference(cookie: Board.cookie(7), replace: false, rows: [], removed: ["r"]), requestedWith: Board.cookie(5), to: "ahead")
        #expect(live.rows.isEmpty)
        // The subscription behind brings r as it was at 5, then its departure.
        try tasks.apply(
            RowsDifference(cookie: Board.cookie(6), replace: false, rows: Board.versioned([Board.task("r", at: 1)], counter: 5), removed: []),
            requestedWith: Board.cookie(4), to: "behind")
        #expect(live.rows.isEmpty, "a departed row came back at the version it left with")
        let departed = { try store.read { try Int.fetchOne($0, sql: "SELECT COUNT(*) FROM departed") } }
        #expect(try departed() == 1, "kept while a subscription stands before its departure")
        try tasks.apply(
            RowsDifference(cookie: Board.cookie(8), replace: false, rows: [], removed: ["r"]), requestedWith: Board.cookie(6), to: "behind")
        #expect(try departed() == 0, "forgotten once every cookie is past its departure")
        // A later version (r changed so that a query holds it again) comes in.
        try tasks.apply(
            RowsDifference(
                cookie: Board.cookie(9), replace: false, rows: Board.versioned([Board.task("r", at: 1, title: "back")], counter: 9), removed: []),
            requestedWith: Board.cookie(8), to: "behind")
        #expect(live.rows.map(\.title) == ["back"])
    }

    /// A subscription the app stopped no longer holds the changes it has not seen on top while
    /// another runs: held, a change the server accepted would be replayed over every newer
    /// value of its row, for as long as the stopped one stays stopped. With none running, the
    /// stopped ones count again (a relaunch, before the app subscribes).
    @Test func aStoppedSubscriptionDoesNotHoldChangesOnTop() throws {
        let (store, tasks) = try collection()
        for key in ["stopped", "running"] { try tasks.record(key) }
        let live = tasks.live(Board.project("p1"))
        try tasks.apply(replace([Board.task("a", at: 1)], at: 1), requestedWith: nil, to: "stopped")
        try tasks.apply(replace([Board.task("t", at: 2)], at: 1), requestedWith: nil, to: "running")
        try tasks.paused("stopped")
        try tasks.mutate(.rename(id: "t", title: "X"))
        try tasks.accepted(1)
        try tasks.apply(
            RowsDifference(
                cookie: Board.cookie(2), replace: false, rows: Board.versioned([Board.task("t", at: 2, title: "X")], counter: 2), removed: [],
                lastMutationID: 1),
            requestedWith: Board.cookie(1), to: "running")
        #expect(tasks.pendingCount == 0, "the running subscription holds the change: it leaves the queue")
        // Another device renames it: shown as the server says, not under the change replayed.
        try tasks.apply(
            RowsDifference(
                cookie: Board.cookie(3), replace: false, rows: Board.versioned([Board.task("t", at: 2, title: "Y")], counter: 3), removed: [],
                lastMutationID: 1),
            requestedWith: Board.cookie(2), to: "running")
        #expect(live.rows.map(\.title) == ["a", "Y"])

        // Both stopped (the app quit): the least of them holds the changes again.
        try tasks.paused("running")
        try tasks.mutate(.rename(id: "a", title: "Z"))
        try tasks.accepted(2)
        try tasks.apply(
            RowsDifference(cookie: Board.cookie(4), replace: false, rows: [], removed: [], lastMutationID: 2), requestedWith: Board.cookie(3),
            to: "running")
        #expect(live.rows.map(\.title) == ["Z", "Y"], "the stopped subscription holding a has not seen the change")
        #expect(tasks.pendingCount == 1)
        // Subscribed again: running, and the one left stopped no longer counts.
        try tasks.record("running")
        try tasks.apply(
            RowsDifference(cookie: Board.cookie(5), replace: false, rows: [], removed: [], lastMutationID: 2), requestedWith: Board.cookie(4),
            to: "running")
        #expect(tasks.pendingCount == 0)
        _ = store
    }

    /// The server refuses a change and moves the client's `lastMutationID` on, and its sockets say
    /// so before the refusal's answer arrives: the change is no longer shown, and its refusal is
    /// still reported, once.
    @Test func aRefusalSlowerThanTheSocketsIsStillReported() async throws {
        let (store, tasks) = try collection()
        try tasks.record("s")
        let live = tasks.live(Board.project("p1"))
        try tasks.apply(replace([Board.task("a", at: 1)], at: 1), requestedWith: nil, to: "s")
        let refusals = tasks.refusals()
        try tasks.mutate(.rename(id: "a", title: "refused"))
        #expect(live.rows.map(\.title) == ["refused"])
        try tasks.apply(
            RowsDifference(cookie: Board.cookie(2), replace: false, rows: [], removed: [], lastMutationID: 1), requestedWith: Board.cookie(1), to: "s"
        )
        #expect(live.rows.map(\.title) == ["a"])
        try tasks.refused(1, id: MutationID(client: store.clientID, sequence: 1), error: HTTPStatusError(status: 404))
        var reported = refusals.makeAsyncIterator()
        #expect(await reported.next()?.mutation == .rename(id: "a", title: "refused"))
        #expect(tasks.pendingCount == 0)
    }

    /// A refusal that comes while nobody reads the refusals (the queue sends from the
    /// collection's opening, before the app asks) is kept for the next reader, once.
    @Test func aRefusalBeforeAnyReaderIsReportedToTheFirst() async throws {
        let (store, tasks) = try collection()
        try tasks.mutate(.put(Board.task("a", at: 1)))
        try tasks.mutate(.put(Board.task("b", at: 2)))
        try tasks.refused(1, id: MutationID(client: store.clientID, sequence: 1), error: HTTPStatusError(status: 422))
        #expect(tasks.live(Board.project("p1")).rows.map(\.id) == ["b"])
        let first = tasks.refusals()
        let second = tasks.refusals()
        try tasks.refused(2, id: MutationID(client: store.clientID, sequence: 2), error: HTTPStatusError(status: 422))
        #expect(await mutations(2, of: first) == [.put(Board.task("a", at: 1)), .put(Board.task("b", at: 2))])
        // The second reader, there since before the second refusal, gets that one alone.
        #expect(await mutations(1, of: second) == [.put(Board.task("b", at: 2))])
    }

    /// The mutations of the first `count` refusals of `stream`; `nil` if they have not come
    /// within a hang guard.
    private func mutations(_ count: Int, of stream: AsyncStream<RefusedRowMutation<TaskMutation>>) async -> [TaskMutation]? {
        let seen = Locked<[TaskMutation]>([])
        let last = await firstElement(of: stream, within: .seconds(10)) { refusal in
            seen.withLock { seen in
                if let mutation = refusal.mutation { seen.append(mutation) }
                return seen.count == count
            }
        }
        return last == nil ? nil : seen.value
    }

    /// An answer that arrives after the app ended its subscription is dropped: it does not bring
    /// the subscription back.
    @Test func anAnswerAfterTheEndIsDropped() throws {
        let (_, tasks) = try collection()
        try tasks.record("s")
        try tasks.apply(replace([Board.task("a", at: 1)], at: 1), requestedWith: nil, to: "s")
        try tasks.drop("s", refused: false)
        #expect(try tasks.apply(replace([Board.task("b", at: 2)], at: 2), requestedWith: nil, to: "s") == .outdated)
        #expect(tasks.live(Board.project("p1")).rows.isEmpty)
        #expect(tasks.cookie(of: "s") == nil)
    }

    /// A change to a row that a server change moved out of the query: the row leaves the screen
    /// once the server's answer says so, the change does not bring it back.
    @Test func changeToARowThatLeftTheQuery() throws {
        let (_, tasks) = try collection()
        for key in ["s"] { try tasks.record(key) }
        let p1 = tasks.live(Board.project("p1"))
        try tasks.apply(replace([Board.task("a", at: 1)], at: 1), requestedWith: nil, to: "s")
        try tasks.mutate(.rename(id: "a", title: "offline"))
        #expect(p1.rows.map(\.title) == ["offline"])
        // Someone moved it to p2 meanwhile, which this subscription does not see: removed.
        try tasks.apply(
            RowsDifference(cookie: Board.cookie(2), replace: false, rows: [], removed: ["a"], lastMutationID: 0), requestedWith: Board.cookie(1),
            to: "s")
        #expect(p1.rows.isEmpty)
    }

    /// The rows, cookies and pending changes are on disk: a relaunch shows them at once.
    @Test func relaunchShowsRowsAndChangesFromDisk() throws {
        let (folder, path) = try storeFile("collections")
        defer { try? FileManager.default.removeItem(at: folder) }
        let client: ClientID
        do {
            let (store, tasks) = try collection(try LocalStore(path: path))
            for key in ["s"] { try tasks.record(key) }
            client = store.clientID
            try tasks.apply(replace([Board.task("a", at: 1), Board.task("b", at: 2)], at: 3), requestedWith: nil, to: "s")
            try tasks.mutate(.delete(id: "b"))
            try store.close()
        }
        let (store, tasks) = try collection(try LocalStore(path: path))
        #expect(store.clientID == client)
        #expect(tasks.live(Board.project("p1")).rows.map(\.id) == ["a"])
        #expect(tasks.cookie(of: "s") == Board.cookie(3))
        #expect(tasks.pendingCount == 1)
        // The next change numbers on from the last launch's.
        try tasks.mutate(.rename(id: "a", title: "x"))
        #expect(try store.read { try Int.fetchAll($0, sql: "SELECT sequence FROM mutations ORDER BY sequence") } == [1, 2])
    }

    @TaskLocal static var marker: String?

    /// A new store takes the client id it is given, and a file keeps the one it holds whatever
    /// a later launch gives; a blocking store runs a long write on the calling thread, where
    /// another runs it on a thread of its own.
    @Test func aGivenClientIDAndBlockingWrites() async throws {
        let (folder, path) = try storeFile("collections")
        defer { try? FileManager.default.removeItem(at: folder) }
        let given = ClientID(rawValue: "device-1")
        do {
            let store = try LocalStore(path: path, clientID: given)
            #expect(store.clientID == given)
            try store.close()
        }
        let reopened = try LocalStore(path: path, clientID: ClientID(rawValue: "device-2"))
        #expect(reopened.clientID == given, "the file's client id, whatever the launch gives")
        try reopened.close()
        #expect(try LocalStore.inMemory(clientID: given).clientID == given)
        // A task-local value is seen by code that runs in the calling task, and by nothing a
        // dispatch queue runs.
        let marked = { @Sendable in Self.marker }
        let inline = try await Self.$marker.withValue("caller") { try await LocalStore.inMemory(blocking: true).writingApart(marked) }
        #expect(inline == "caller", "a blocking store's long write runs in the calling task")
        let apart = try await Self.$marker.withValue("caller") { try await LocalStore.inMemory().writingApart(marked) }
        #expect(apart == nil, "another store's runs on a thread of its own")
    }

    /// A file written by the version that indexed the members by row opens with the index
    /// dropped, and a row two subscriptions hold stays on the device when one of them ends:
    /// whether another holds it is now asked of each subscription of the collection.
    @Test func aFileWithTheMembersIndexOpensWithoutIt() throws {
        let (folder, path) = try storeFile("collections")
        defer { try? FileManager.default.removeItem(at: folder) }
        do {
            let (store, tasks) = try collection(try LocalStore(path: path))
            for key in ["s", "t"] { try tasks.record(key) }
            try tasks.apply(replace([Board.task("a", at: 1), Board.task("b", at: 2)], at: 3), requestedWith: nil, to: "s")
            try tasks.apply(replace([Board.task("a", at: 1)], at: 3), requestedWith: nil, to: "t")
            try store.close()
        }
        // The file as the version before left it.
        let older = try DatabaseQueue(path: path)
        try older.write { db in
            try db.execute(sql: "CREATE INDEX members_by_row ON members (collection, id)")
            try db.execute(sql: "DELETE FROM grdb_migrations WHERE identifier = 'collections-4'")
        }
        try older.close()
        let (store, tasks) = try collection(try LocalStore(path: path))
        let indexes = try store.read { try String.fetchAll($0, sql: "SELECT name FROM sqlite_master WHERE type = 'index' AND tbl_name = 'members'") }
        #expect(!indexes.contains("members_by_row"), "\(indexes)")
        try tasks.drop("s", refused: false)
        #expect(tasks.live(Board.project("p1")).rows.map(\.id) == ["a"], "the row t holds stays; the one only s held leaves")
    }

    /// A change stored by a launch whose mutation type this one no longer decodes cannot be
    /// shown nor sent: it is taken off at its turn and reported, without the change but with
    /// its JSON (a `DroppedMutation`), and the changes after it are sent. It was taken off
    /// unreported.
    @Test func aChangeThatNoLongerDecodesIsReported() async throws {
        let (folder, path) = try storeFile("collections")
        defer { try? FileManager.default.removeItem(at: folder) }
        do {
            let (store, tasks) = try collection(try LocalStore(path: path))
            try tasks.mutate(.delete(id: "b"))
            try store.close()
        }
        let store = try LocalStore(path: path)
        let sent = Locked<[Renaming]>([])
        let tasks = store.collection(Board.tasks, mutations: Renaming.self) { mutation, _ in
            sent.withLock { $0.append(mutation) }
            return Version(epoch: 1, counter: 1)
        }
        let refusals = tasks.refusals()
        try tasks.mutate(Renaming(id: "a", title: "kept"))
        let dropped = await firstElement(of: refusals, within: .seconds(20)) { _ in true }
        #expect(dropped != nil, "no refusal within the hang guard")
        #expect(dropped?.mutation == nil)
        let reason = (dropped?.error as? DroppedMutation)?.reason ?? ""
        #expect(reason.contains("delete"), "the dropped change's JSON is reported: \(reason)")
        #expect(dropped?.id == MutationID(client: store.clientID, sequence: 1))
        #expect(await eventually(within: .seconds(20)) { sent.value == [Renaming(id: "a", title: "kept")] }, "the next change was not sent")
        try store.close()
    }

    /// A released collection ends its activity, refusals and live queries' streams: whoever
    /// follows them (an inspector's watch, a screen) does not wait for good.
    @Test func aReleasedCollectionEndsItsStreams() async throws {
        let store = try LocalStore.inMemory()
        var tasks: LocalCollection<TaskRow, TaskMutation>? = store.collection(Board.tasks, mutations: TaskMutation.self)
        let activity = tasks!.activity()
        let refusals = tasks!.refusals()
        let updates = tasks!.live(Board.project("p1")).updates()
        let ended = Locked(0)
        let followers = [
            Task {
                for await _ in activity {}
                ended.withLock { $0 += 1 }
            },
            Task {
                for await _ in refusals {}
                ended.withLock { $0 += 1 }
            },
            Task {
                for await _ in updates {}
                ended.withLock { $0 += 1 }
            },
        ]
        weak let released = tasks
        tasks = nil
        #expect(released == nil, "something keeps the collection alive")
        #expect(await eventually { ended.value == 3 }, "\(ended.value) of the 3 streams ended")
        for follower in followers { follower.cancel() }
    }

    /// A live query's updates end when it is stopped, when its store closes, and at once for a
    /// reader that asks after either (with the rows as they stand): a `for await` over them
    /// never waits for changes that cannot come.
    @Test func updatesEndWithTheQueryOrTheStore() async throws {
        let (store, tasks) = try collection()
        try tasks.mutate(.put(Board.task("a", at: 1)))
        let stopped = tasks.live(Board.project("p1"))
        stopped.stop()
        try tasks.mutate(.put(Board.task("b", at: 2)))
        #expect(await ids(untilTheEndOf: stopped.updates()) == [["a"]], "a stopped query's updates: its rows, then the end")

        let open = tasks.live(Board.project("p1"))
        let following = Task { await ids(untilTheEndOf: open.updates()) }
        try store.close()
        #expect(await following.value?.last == ["a", "b"], "the store closed: the updates end")
        #expect(await ids(untilTheEndOf: open.updates()) == [["a", "b"]], "asked after the close: the rows once, then the end")
        #expect(await ids(untilTheEndOf: tasks.live(Board.project("p1")).updates()) == [[]], "made after the close: no rows, then the end")
    }

    /// The ids of every element of `updates` until it ends; `nil` if it has not ended within a
    /// hang guard.
    private func ids(untilTheEndOf updates: AsyncStream<LiveRows<TaskRow>>) async -> [[String]]? {
        let seen = Locked<[[String]]>([])
        let ended = Locked(false)
        let reader = Task {
            for await rows in updates { seen.withLock { $0.append(rows.map(\.id)) } }
            ended.withLock { $0 = true }
        }
        guard await eventually(within: .seconds(10), { ended.value }) else {
            reader.cancel()
            return nil
        }
        return seen.value
    }

    /// The activity an inspector reads comes in the order it happened: an answer, then the
    /// changes it contained, which taking it in let go of.
    @Test func anAnswerIsToldBeforeWhatItContained() async throws {
        let (_, tasks) = try collection()
        try tasks.record("s")
        try tasks.apply(replace([Board.task("a", at: 1)], at: 1), requestedWith: nil, to: "s")
        let activity = tasks.activity()
        try tasks.mutate(.rename(id: "a", title: "renamed"))
        try tasks.accepted(1)
        try tasks.apply(
            replace([Board.task("a", at: 1, title: "renamed")], at: 2, counter: 2, lastMutationID: 1), requestedWith: nil, to: "s")
        let kinds = Locked<[String]>([])
        _ = await firstElement(of: activity, within: .seconds(10)) { event in
            kinds.withLock { kinds in
                kinds.append(String("\(event.kind)".prefix { $0 != "(" }))
                return kinds.count == 4
            }
        }
        #expect(kinds.value == ["queued", "accepted", "answer", "contained"])
    }

    /// A closed store's collections throw, and their tasks (a subscription's socket finishing a
    /// message, the queue) find it closed rather than using the closed file, which crashed.
    @Test func aClosedStoreThrowsAndNeverUsesTheFile() async throws {
        let (folder, path) = try storeFile("closed")
        defer { try? FileManager.default.removeItem(at: folder) }
        let (store, tasks) = try collection(try LocalStore(path: path))
        try tasks.record("s")
        let live = tasks.live(Board.project("p1"))
        try store.close()
        try store.close()  // twice: nothing more
        #expect(throws: LocalStoreClosedError.self) { try tasks.mutate(.put(Board.task("a", at: 1))) }
        #expect(throws: LocalStoreClosedError.self) { try tasks.row("a") }
        #expect(throws: LocalStoreClosedError.self) {
            try tasks.apply(replace([Board.task("a", at: 1)], at: 1), requestedWith: nil, to: "s")
        }
        #expect(tasks.cookie(of: "s") == nil)
        #expect(tasks.pendingCount == 0)
        #expect(live.rows.isEmpty)
        // A live query made after it shows nothing, and does not crash either.
        #expect(tasks.live(Board.project("p1")).rows.isEmpty)
    }

    /// A limit query's window shifts when a row above it is deleted: the next row comes in.
    @Test func windowShiftsWhenARowAboveLeaves() throws {
        let (_, tasks) = try collection()
        for key in ["s"] { try tasks.record(key) }
        try tasks.apply(replace((1...5).map { Board.task("t\($0)", at: $0) }, at: 1), requestedWith: nil, to: "s")
        let first = tasks.live(Board.project("p1", limit: 2))
        #expect(first.rows.map(\.id) == ["t1", "t2"])
        try tasks.mutate(.delete(id: "t1"))
        #expect(first.rows.map(\.id) == ["t2", "t3"])
        try tasks.mutate(.put(Board.task("t0", at: 0)))
        #expect(first.rows.map(\.id) == ["t0", "t2"])
    }

    /// A subscription refused (404) takes its rows off; one that answers again is counted again.
    @Test func refusalTakesRowsOff() throws {
        let (_, tasks) = try collection()
        for key in ["s"] { try tasks.record(key) }
        let live = tasks.live(Board.project("p1"))
        try tasks.apply(replace([Board.task("a", at: 1)], at: 1), requestedWith: nil, to: "s")
        try tasks.drop("s", refused: true)
        #expect(live.rows.isEmpty)
        #expect(tasks.cookie(of: "s") == nil)
        try tasks.apply(replace([Board.task("a", at: 1)], at: 2), requestedWith: nil, to: "s")
        #expect(live.rows.map(\.id) == ["a"])
    }

    /// A server restored from a backup answers from a new epoch: its whole result replaces the
    /// rows, however far the old epoch's cookie had gone; and a row's new-epoch version wins.
    @Test func aNewEpochResets() throws {
        let (_, tasks) = try collection()
        for key in ["s"] { try tasks.record(key) }
        let live = tasks.live(Board.project("p1"))
        try tasks.apply(replace([Board.task("a", at: 1), Board.task("b", at: 2)], at: 900, counter: 40), requestedWith: nil, to: "s")
        let restored = RowsDifference(
            cookie: "2.3.00000000000000aa", replace: true,
            rows: [VersionedRow(id: "a", version: Version(epoch: 2, counter: 1), value: Board.task("a", at: 1, title: "restored"))], removed: [])
        #expect(try tasks.apply(restored, requestedWith: Board.cookie(900), to: "s") == .applied)
        #expect(live.rows.map(\.title) == ["restored"])
        #expect(tasks.cookie(of: "s") == "2.3.00000000000000aa")
    }

    /// A change whose `apply` reads its own collection (it should use its edits, but an app may
    /// not): the read joins the store's write under way instead of entering SQLite's queue a
    /// second time, which would stop the process, and sees the confirmed row, so that the change
    /// is not counted twice when the overlay is made again; a change made from there is refused.
    @Test func aChangeThatReadsItsCollectionWhileReplayed() throws {
        let store = try LocalStore.inMemory()
        let typed = store.collection(Board.tasks, mutations: ReadingMutation.self)
        let live = typed.live(Board.project("p1"))
        ReadingMutation.target.withLock { $0 = typed }
        defer { ReadingMutation.target.withLock { $0 = nil } }
        try typed.record("s")
        try typed.apply(replace([Board.task("a", at: 1)], at: 1), requestedWith: nil, to: "s")
        try typed.mutate(ReadingMutation(id: "a"))
        #expect(try typed.row("a")?.title == "a!")
        #expect(live.rows.map(\.title) == ["a!"])
        // Made again (the server accepted it): still once.
        try typed.accepted(1)
        #expect(live.rows.map(\.title) == ["a!"])
        // A change made from inside another's apply(to:) is refused, not half made.
        try typed.mutate(ReadingMutation(id: "a", changesAnother: true))
        #expect(ReadingMutation.refusal.withLock { $0 }?.contains("RowEdits") == true)
        #expect(typed.pendingCount == 2)
    }
}

/// A change that reads the shown row through its collection rather than its edits, and may
/// try to make another change from inside its `apply(to:)`.
private struct ReadingMutation: RowMutation {
    var id: String
    var changesAnother = false
    static let target = Mutex<LocalCollection<Board.TaskRow, ReadingMutation>?>(nil)
    static let refusal = Mutex<String?>(nil)

    func apply(to rows: inout RowEdits<Board.TaskRow>) {
        guard let collection = Self.target.withLock({ $0 }) else { return }
        if changesAnother {
            do {
                try collection.mutate(ReadingMutation(id: "b"))
            } catch {
                Self.refusal.withLock { $0 = "\(error)" }
            }
            return
        }
        guard var row = try? collection.row(id) else { return }
        row.title += "!"
        rows[id] = row
    }
}

/// A mutation type that reads none of `Board.TaskMutation`'s JSON: an app's next version.
struct Renaming: RowMutation, Equatable {
    var id: String
    var title: String

    func apply(to rows: inout RowEdits<Board.TaskRow>) {
        rows[id]?.title = title
    }
}
