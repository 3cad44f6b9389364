import Foundation
import ServerTestApp
import StateLoopServer
import StateLoopWire
import Synchronization
import Testing

/// Collections served by query: whole results, catch-up from a cookie, what a principal may
/// read, and the cookies that cannot be caught up from.
@Suite("Collections: queries and catch-up", .serialized, .timeLimit(.minutes(5)))
struct CollectionQueryTests {
    typealias Row = TaskBoard.TaskRow

    /// A board with ann in projects p1 and p2, and `rows` written.
    @Test("a subscription without a cookie gets the query's whole result, in its order, with a cookie", arguments: StoreKind.enabled)
    func wholeResult(kind: StoreKind) async throws {
        try await kind.withStore { store in
            let server = try await TaskBoard.board(
                [
                    Row(id: "a", projectID: "p1", title: "A", position: 3), Row(id: "b", projectID: "p1", title: "B", position: 1),
                    Row(id: "c", projectID: "p2", title: "C", position: 2), Row(id: "d", projectID: "p1", title: "D", position: 2),
                ], store: store)
            try await withRunning(server) { port in
                let answer = try await TestClient(port: port).query("byProject", as: "ann", ["projectID": "p1"])
                let difference = try #require(answer.difference)
                #expect(difference.replace)
                #expect(difference.rows.map(\.id) == ["b", "d", "a"])
                #expect(difference.removed.isEmpty)
                #expect(difference.rows.allSatisfy { $0.version.counter == 1 && $0.version.epoch == server.epoch })
                #expect(difference.cookie.hasPrefix("\(server.epoch)."))
            }
        }
    }

    @Test(
        "from a cookie: rows that entered or changed are sent, rows that left are removed by id, and rows that never matched are not mentioned",
        arguments: StoreKind.enabled)
    func catchUp(kind: StoreKind) async throws {
        try await kind.withStore { store in
            let server = try await TaskBoard.board(
                [
                    Row(id: "stays", projectID: "p1", title: "stays", position: 1), Row(id: "edited", projectID: "p1", title: "old", position: 2),
                    Row(id: "moved-out", projectID: "p1", title: "out", position: 3), Row(id: "deleted", projectID: "p1", title: "gone", position: 4),
                    Row(id: "moved-in", projectID: "p2", title: "in", position: 5), Row(id: "elsewhere", projectID: "p2", title: "p2", position: 6),
                ], store: store)
            try await withRunning(server) { port in
                let client = TestClient(port: port)
                var ann = TaskBoard.Subscriber()
                _ = try await client.refresh(&ann, ["projectID": "p1"])
                #expect(Set(ann.rows.keys) == ["stays", "edited", "moved-out", "deleted"])
                try await server.update { transaction in
                    try transaction.write(Row(id: "edited", projectID: "p1", title: "new", position: 2), to: TaskBoard.tasks)
                    try transaction.write(Row(id: "moved-out", projectID: "p2", title: "out", position: 3), to: TaskBoard.tasks)
                    try transaction.delete("deleted", from: TaskBoard.tasks)
                    try transaction.write(Row(id: "moved-in", projectID: "p1", title: "in", position: 5), to: TaskBoard.tasks)
                    try transaction.write(Row(id: "elsewhere", projectID: "p2", title: "still p2", position: 6), to: TaskBoard.tasks)
                    try transaction.write(Row(id: "added", projectID: "p1", title: "new", position: 7), to: TaskBoard.tasks)
                    // Made and deleted within the transaction: never there.
                    try transaction.write(Row(id: "ghost", projectID: "p1", title: "ghost", position: 8), to: TaskBoard.tasks)
                    try transaction.delete("ghost", from: TaskBoard.tasks)
                }
                // Written in a later commit, then moved away and back: sent once, as it is now.
                try await server.update { try $0.write(Row(id: "bounced", projectID: "p1", title: "b", position: 9), to: TaskBoard.tasks) }
                try await server.update { try $0.write(Row(id: "bounced", projectID: "p2", title: "b", position: 9), to: TaskBoard.tasks) }
                try await server.update { try $0.write(Row(id: "bounced", projectID: "p1", title: "b2", position: 9), to: TaskBoard.tasks) }
                let difference = try await client.refresh(&ann, ["projectID": "p1"])
                #expect(!difference.replace)
                #expect(Set(difference.rows.map(\.id)) == ["edited", "moved-in", "added", "bounced"])
                #expect(Set(difference.removed) == ["moved-out", "deleted"])
                #expect(difference.rows.first { $0.id == "edited" }?.version.counter == 2)
                #expect(difference.rows.first { $0.id == "bounced" }?.value.title == "b2")
                // Nothing since: an empty difference, the same cookie.
                let cookie = ann.cookie
                let nothing = try await client.refresh(&ann, ["projectID": "p1"])
                #expect(!nothing.replace && nothing.rows.isEmpty && nothing.removed.isEmpty)
                #expect(ann.cookie == cookie)
                // What the catch-ups built is the whole result now.
                var fresh = TaskBoard.Subscriber()
                _ = try await client.refresh(&fresh, ["projectID": "p1"])
                #expect(ann.rows == fresh.rows)
            }
        }
    }

    @Test(
        "a row the principal may not read is in no answer; one that becomes unreadable is removed, and readable again, sent again",
        arguments: StoreKind.enabled)
    func readableRows(kind: StoreKind) async throws {
        try await kind.withStore { store in
            let server = try await TaskBoard.board(
                [
                    Row(id: "open", projectID: "p1", title: "open", position: 1),
                    Row(id: "secret", projectID: "p1", title: "s", position: 2, hidden: true),
                ], store: store)
            try await withRunning(server) { port in
                let client = TestClient(port: port)
                var ann = TaskBoard.Subscriber()
                _ = try await client.refresh(&ann, ["projectID": "p1"])
                #expect(Set(ann.rows.keys) == ["open"])
                try await server.update { transaction in
                    try transaction.write(Row(id: "open", projectID: "p1", title: "open", position: 1, hidden: true), to: TaskBoard.tasks)
                    try transaction.write(Row(id: "secret", projectID: "p1", title: "s2", position: 2, hidden: true), to: TaskBoard.tasks)
                }
                let hidden = try await client.refresh(&ann, ["projectID": "p1"])
                #expect(hidden.removed == ["open"], "the row that became unreadable leaves; the one never readable is not named")
                #expect(hidden.rows.isEmpty)
                try await server.update { try $0.write(Row(id: "open", projectID: "p1", title: "open", position: 1), to: TaskBoard.tasks) }
                let shown = try await client.refresh(&ann, ["projectID": "p1"])
                #expect(shown.rows.map(\.id) == ["open"] && shown.removed.isEmpty)
            }
        }
    }

    @Test("a principal the query refuses gets 404, with or without a cookie, as soon as it loses access", arguments: StoreKind.enabled)
    func refusedSubscription(kind: StoreKind) async throws {
        try await kind.withStore { store in
            let server = try await TaskBoard.board([Row(id: "a", projectID: "p2", title: "A", position: 1)], store: store)
            try await withRunning(server) { port in
                let client = TestClient(port: port)
                #expect(try await client.query("byProject", as: "eve", ["projectID": "p1"]).status == 404)
                #expect(try await client.query("byProject", as: "carol", ["projectID": "p2"]).status == 404)
                var bob = TaskBoard.Subscriber()
                _ = try await client.refresh(&bob, ["projectID": "p2"], as: "bob")
                #expect(bob.rows.keys.sorted() == ["a"])
                try await server.update { try $0.write(["ann"], to: TaskBoard.members, "p2") }
                let again = try await client.query("byProject", as: "bob", ["projectID": "p2"], cookie: bob.cookie)
                #expect(again.status == 404, "removed from the project, bob's old cookie gets nothing")
                #expect(try await client.query("byProject", as: "bob", ["projectID": "p2"]).status == 404)
                // Without the parameter: the app's 400.
                let missing = try await client.query("byProject", as: "ann", [:])
                #expect(missing.status == 400 && TestClient.errorCode(missing.body) == "missingParameter")
                #expect(try await client.query("byProject", as: "nobody-signed-in", ["projectID": "p1"]).status == 404)
                #expect(try await client.send("GET", "/tasks/byProject?projectID=p1", as: nil).status == 401)
            }
        }
    }

    @Test(
        "cookies that cannot be caught up from get the whole result: another epoch, one never handed out, one older than the feed keeps, one of another query; a malformed one is refused"
    )
    func cookiesThatReplace() async throws {
        let clock = ManualDate()
        let store = try SQLiteStore(now: { clock.now })
        let server = try await TaskBoard.board([Row(id: "a", projectID: "p1", title: "A", position: 1)], store: store)
        try await withRunning(server) { port in
            let client = TestClient(port: port)
            var ann = TaskBoard.Subscriber()
            _ = try await client.refresh(&ann, ["projectID": "p1"])
            let parts = try #require(ann.cookie?.split(separator: ".").map(String.init))
            let (position, query) = (try #require(UInt64(parts[1])), parts[2])
            let otherQuery = String(repeating: "0", count: 16)
            for cookie in [
                "\(server.epoch + 1).\(position).\(query)", "\(server.epoch).\(position + 1_000).\(query)", "1.0.\(query)",
                "\(server.epoch).\(position).\(otherQuery)",
            ] {
                let answer = try await client.query("byProject", as: "ann", ["projectID": "p1"], cookie: cookie)
                #expect(answer.difference?.replace == true, "cookie \(cookie)")
                #expect(answer.difference?.rows.map(\.id) == ["a"], "cookie \(cookie)")
            }
            for cookie in ["", "x", "1.2", "-1.2.\(query)", "\(server.epoch)", "1.2.\(query.uppercased())", "1.2.\(query)0"] {
                let answer = try await client.query("byProject", as: "ann", ["projectID": "p1"], cookie: cookie)
                #expect(answer.status == 400 && TestClient.errorCode(answer.body) == "invalidCookie", "cookie '\(cookie)'")
            }
            // Commits an hour apart, the older ones pruned: ann's cookie is before what the feed keeps.
            clock.advance(by: 3_600)
            try await server.update { try $0.write(Row(id: "b", projectID: "p1", title: "B", position: 2), to: TaskBoard.tasks) }
            clock.advance(by: 3_600)
            try await server.update { try $0.write(Row(id: "c", projectID: "p1", title: "C", position: 3), to: TaskBoard.tasks) }
            #expect(try await store.forgetChanges(committedBefore: clock.now.addingTimeInterval(-60)) > 0)
            let pruned = try await client.refresh(&ann, ["projectID": "p1"])
            #expect(pruned.replace)
            #expect(pruned.rows.map(\.id) == ["a", "b", "c"])
            // Now caught up, it catches up from the feed again.
            try await server.update { try $0.delete("a", from: TaskBoard.tasks) }
            let after = try await client.refresh(&ann, ["projectID": "p1"])
            #expect(!after.replace && after.removed == ["a"])
        }
    }

    @Test(
        "a query with a limit is answered whole, so its window shifts when a row above it leaves; rows the reader may not read take no place in it",
        arguments: StoreKind.enabled)
    func limitedQuery(kind: StoreKind) async throws {
        try await kind.withStore { store in
            let server = try await TaskBoard.board((1...5).map { Row(id: "t\($0)", projectID: "p1", title: "\($0)", position: $0) }, store: store)
            try await withRunning(server) { port in
                let client = TestClient(port: port)
                var ann = TaskBoard.Subscriber()
                _ = try await client.refresh(&ann, ["projectID": "p1", "count": "2"], query: "firstOpen")
                #expect(ann.rows.keys.sorted() == ["t1", "t2"])
                try await server.update { transaction in
                    try transaction.write(Row(id: "t1", projectID: "p1", title: "1", position: 1, done: true), to: TaskBoard.tasks)
                }
                let shifted = try await client.refresh(&ann, ["projectID": "p1", "count": "2"], query: "firstOpen")
                #expect(shifted.replace)
                #expect(shifted.rows.map(\.id) == ["t2", "t3"])
                #expect(ann.rows.keys.sorted() == ["t2", "t3"])
                // A row the reader may not read takes no place in its window.
                try await server.update { transaction in
                    try transaction.write(Row(id: "t2", projectID: "p1", title: "2", position: 2, hidden: true), to: TaskBoard.tasks)
                }
                let hidden = try await client.refresh(&ann, ["projectID": "p1", "count": "2"], query: "firstOpen")
                #expect(hidden.rows.map(\.id) == ["t3", "t4"])
            }
        }
    }

    @Test("a cookie of the query as it was, before a change made it otherwise, gets the whole new result", arguments: StoreKind.enabled)
    func queryMadeOtherwise(kind: StoreKind) async throws {
        try await kind.withStore { store in
            let server = try await TaskBoard.board(
                [Row(id: "a", projectID: "p1", title: "A", position: 1), Row(id: "x", projectID: "p3", title: "X", position: 2)], store: store)
            try await withRunning(server) { port in
                let client = TestClient(port: port)
                var bob = TaskBoard.Subscriber()
                _ = try await client.refresh(&bob, [:], query: "mine", as: "bob")
                #expect(bob.rows.isEmpty)
                // Bob joins p3, whose task has not changed: from the feed alone, nothing to say.
                try await server.update { try $0.write(["bob"], to: TaskBoard.members, "p3") }
                let joined = try await client.refresh(&bob, [:], query: "mine", as: "bob")
                #expect(joined.replace && joined.rows.map(\.id) == ["x"])
            }
        }
    }

    @Test("a query of a name SQL would take as written is refused by the store, not run")
    func invalidNames() async throws {
        let server = try await TaskBoard.board([Row(id: "a", projectID: "p1", title: "A", position: 1)])
        await #expect(throws: (any Error).self) {
            try await server.read { try $0.rows(of: TaskBoard.tasks, matching: RowQuery(orderedBy: [.init("x') --")])) }
        }
        await #expect(throws: (any Error).self) {
            var query = RowQuery()
            query.limit = -1
            return try await server.read { [query] in try $0.rows(of: TaskBoard.tasks, matching: query) }
        }
    }

    @Test("a query on a field its collection does not declare is answered 500, naming the mistake")
    func undeclaredField() async throws {
        let server = try await TaskBoard.board([])
        try await withRunning(server) { port in
            let answer = try await TestClient(port: port).query("byTitle", as: "ann", ["title": "x"])
            #expect(answer.status == 500 && TestClient.errorCode(answer.body) == "undeclaredField")
        }
    }
}

/// A wall clock the test moves by hand, for a store's commit times.
final class ManualDate: Sendable {
    private let seconds = Mutex<TimeInterval>(Date().timeIntervalSince1970)

    var now: Date {
        Date(timeIntervalSince1970: seconds.withLock { $0 })
    }

    func advance(by interval: TimeInterval) {
        seconds.withLock { $0 += interval }
    }
}
