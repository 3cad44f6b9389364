import Foundation
import StateLoopServer
import StateLoopWire
import Testing

@testable import StateLoopServerPostgres

/// How a catch-up's page of the PostgreSQL change feed becomes commits, without a database.
@Suite("change feed pages")
struct FeedPageTests {
    private let time = Date(timeIntervalSince1970: 1_000)

    private func value(_ position: UInt64, commit: UInt64, key: String, counter: UInt64) -> FeedPage.Row {
        let stored = StoredValue(key: ResourceKey(resource: "r", id: key), version: Version(epoch: 1, counter: counter), json: Data())
        return FeedPage.Row(position: position, commit: commit, time: time, value: stored)
    }

    private func progress(commit: UInt64, sequence: UInt64) -> FeedPage.Row {
        FeedPage.Row(
            position: commit, commit: commit, time: time,
            cause: ChangeCause(scope: "ann", mutation: MutationID(rawValue: "c:\(sequence)")),
            progress: ClientProgress(scope: "ann", client: ClientID(rawValue: "c"), lastMutationID: sequence)
        )
    }

    @Test("rows group into their commits: each key once at its newest value, progress-only commits kept, the position read through")
    func grouping() throws {
        let page = FeedPage(
            rows: [
                value(3, commit: 3, key: "a", counter: 1), value(4, commit: 3, key: "b", counter: 1), value(5, commit: 3, key: "a", counter: 2),
                progress(commit: 6, sequence: 9),
                value(7, commit: 7, key: "b", counter: 2),
            ], isFull: false)
        guard case .commits(let commits, let through) = page.reading else {
            Issue.record("no commits read")
            return
        }
        #expect(through == 7)
        #expect(commits.count == 3)
        #expect(commits[0].values.map(\.key.id) == ["a", "b"] && commits[0].values.map(\.version.counter) == [2, 1])
        #expect(commits[0].feed == 3...5)
        #expect(commits[1].values.isEmpty && commits[1].progress.map(\.lastMutationID) == [9] && commits[1].feed == nil)
        #expect(commits[1].cause?.mutation.rawValue == "c:9")
        #expect(commits[2].feed == 7...7)
    }

    @Test("a full page leaves its last commit, which may go on beyond it, for the next read")
    func fullPageCutsLastCommit() {
        let page = FeedPage(
            rows: [value(1, commit: 1, key: "a", counter: 1), value(2, commit: 2, key: "a", counter: 2), value(3, commit: 2, key: "b", counter: 1)],
            isFull: true)
        guard case .commits(let commits, let through) = page.reading else {
            Issue.record("no commits read")
            return
        }
        #expect(commits.count == 1 && through == 1)
    }

    @Test("a full page of one commit asks for a larger page; an empty page reads nothing")
    func oneCommitFillsThePage() {
        let full = FeedPage(rows: [value(1, commit: 1, key: "a", counter: 1), value(2, commit: 1, key: "b", counter: 1)], isFull: true)
        guard case .needsLargerPage = full.reading else {
            Issue.record("expected a larger page")
            return
        }
        guard case .nothing = FeedPage(rows: [], isFull: false).reading else {
            Issue.record("expected nothing")
            return
        }
    }
}
