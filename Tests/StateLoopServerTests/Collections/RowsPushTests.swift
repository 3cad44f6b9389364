import Foundation
import StateLoopWire
import TestSupport
import Testing

@testable import StateLoopServer

/// What a slow reader's outbox does with differences: composes them, so that applying the one
/// it writes is applying every one it was offered.
@Suite("Collections: composed differences")
struct RowsPushTests {
    /// What a reader holds: versions by id.
    private static func apply(_ push: RowsPush, to held: [String: Version]) -> [String: Version] {
        var held = push.replace ? [:] : held
        for id in push.removed { held[id] = nil }
        for row in push.rows { held[row.id] = row.version }
        return held
    }

    private static func randomPush(_ position: UInt64, using random: inout SplitMix64) -> RowsPush {
        let ids = (0..<6).map { "r\($0)" }.shuffled(using: &random)
        let rows = ids.prefix(Int.random(in: 0...3, using: &random)).map {
            RowsPush.Sent(id: $0, version: Version(epoch: 1, counter: position), json: Data("\(position)".utf8))
        }
        let removed = Array(ids.dropFirst(rows.count).prefix(Int.random(in: 0...2, using: &random)))
        return RowsPush(
            cookie: CollectionCookie(epoch: 1, position: position, query: "0000000000000000"), replace: Int.random(in: 0..<5, using: &random) == 0,
            rows: rows,
            removed: removed, lastMutationID: Bool.random(using: &random) ? position : nil)
    }

    @Test("applying a composed difference is applying its parts in order, whatever they were", arguments: 0..<20)
    func composition(seed: UInt64) {
        var random = SplitMix64(seed: seed)
        let start: [String: Version] = ["r0": Version(epoch: 1, counter: 0), "r3": Version(epoch: 1, counter: 0)]
        var applied = start
        var composed: RowsPush?
        for position in 1...6 {
            let push = Self.randomPush(UInt64(position), using: &random)
            applied = Self.apply(push, to: applied)
            composed = composed.map { $0.followed(by: push) } ?? push
        }
        let once = Self.apply(composed!, to: start)
        #expect(once == applied)
        #expect(composed!.cookie.position == 6)
        #expect(Set(composed!.rows.map(\.id)).isDisjoint(with: composed!.removed))
    }

    /// A page names the next from the rows it read, not from those it sent: a page whose last
    /// rows the reader may not read still leads on, and a page of none readable is not the end.
    /// A query with a limit is answered whole, whatever page is asked for.
    @Test("pages go on past the rows a reader may not read, to the end; a query with a limit is answered whole")
    func pages() async throws {
        let store = try SQLiteStore()
        let tasks = RowCollection("tasks", of: [String: Int].self) { String(format: "t%05d", $0["n"]!) }.field("n") { $0["n"]! }
        _ = try await store.write { transaction in
            for n in 0..<(RowsPush.pageRows * 2 + 3) {
                let row = ["n": n]
                _ = try transaction.writeRow(try JSONEncoder().encode(row), fields: tasks.fields(of: row), to: tasks.key(tasks.id(of: row)))
            }
        }
        var pages: [RowsPush] = []
        var after: String?
        repeat {
            let page = try await store.read { [after] transaction in
                // Readable: the first 10 rows of each page alone.
                try RowsPush.page(of: "tasks", matching: RowQuery(), after: after, in: transaction, lastMutationID: 3) { fields in
                    guard case .integer(let n)? = fields["n"] else { return false }
                    return n % Int64(RowsPush.pageRows) < 10
                }
            }
            pages.append(page)
            after = page.next
        } while after != nil && pages.count < 10
        #expect(pages.map(\.rows.count) == [10, 10, 3])
        #expect(pages.allSatisfy { $0.replace && $0.lastMutationID == 3 })
        #expect(Set(pages.flatMap(\.rows).map(\.id)).count == 23)
        let limited = try await store.read { transaction in
            try RowsPush.page(
                of: "tasks", matching: RowQuery(orderedBy: [.init("n", descending: true)], limit: 2), after: "t5", in: transaction,
                lastMutationID: nil
            ) { _ in true }
        }
        #expect(limited.next == nil && limited.replace)
        #expect(limited.rows.map(\.id) == [String(format: "t%05d", RowsPush.pageRows * 2 + 2), String(format: "t%05d", RowsPush.pageRows * 2 + 1)])
    }

    @Test("an outbox composes a difference into the one waiting, and drops one positioned before what it sent")
    func outbox() {
        var outbox = PushOutbox()
        func entry(_ position: UInt64, rows: [String], removed: [String] = [], replace: Bool = false) -> PushOutbox.Entry {
            QueryHub.entry(
                RowsPush(
                    cookie: CollectionCookie(epoch: 1, position: position, query: "0000000000000000"), replace: replace,
                    rows: rows.map { RowsPush.Sent(id: $0, version: Version(epoch: 1, counter: position), json: Data("{}".utf8)) },
                    removed: removed, lastMutationID: nil), collection: "tasks")
        }
        #expect(outbox.offer(entry(5, rows: ["a", "b"], replace: true)) == (.queued, true))
        #expect(outbox.offer(entry(6, rows: ["c"], removed: ["a"])).offer == .coalesced)
        guard case .write(let written) = outbox.next() else {
            Issue.record("nothing to write")
            return
        }
        #expect(written.rows?.replace == true)
        #expect(written.rows?.rows.map(\.id) == ["b", "c"])
        #expect(written.rows?.cookie.position == 6)
        #expect(outbox.offer(entry(6, rows: ["d"])).offer == .outdated)
        #expect(outbox.offer(entry(7, rows: ["d"])).offer == .queued)
    }
}
