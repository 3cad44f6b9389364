import Foundation
import StateLoopSync
import StateLoopWire
import TestSupport
import Testing

@_spi(Benchmarks) @testable import StateLoopCollections

/// How a subscription drives its source: each socket opened from the cookie held, messages
/// applied in order, trouble met by opening again from the cookie held.
@Suite struct RowSubscriptionTests {
    typealias TaskRow = Board.TaskRow

    /// A source whose every socket plays the next script, then stays open; it records the
    /// cookie each socket opened with.
    final class ScriptedSource: Sendable {
        let scripts: Locked<[[RowsPushEvent<TaskRow>]]>
        let opened = Locked<[String?]>([])
        let fetched = Locked<[String?]>([])
        /// How many sockets ended (cancelled, or their script closed them).
        let ended = Locked(0)
        let answer: @Sendable (String?) throws -> RowsDifference<TaskRow>

        init(
            _ scripts: [[RowsPushEvent<TaskRow>]],
            answer: @escaping @Sendable (String?) throws -> RowsDifference<TaskRow> = { _ in throw HTTPStatusError(status: 500) }
        ) {
            self.scripts = Locked(scripts)
            self.answer = answer
        }

        var source: RowSource<TaskRow> {
            RowSource(
                key: "tasks/byProject?projectID=p1",
                fetch: { cookie, _ in
                    self.fetched.withLock { $0.append(cookie) }
                    return try self.answer(cookie)
                },
                push: { _, cookie, receive in
                    let held = cookie()
                    self.opened.withLock { $0.append(held) }
                    let script = self.scripts.withLock { $0.isEmpty ? [] : $0.removeFirst() }
                    for event in script {
                        await receive(event == .openedHere ? .opened(cookie: held) : event)
                    }
                    // Open until the subscription cancels it.
                    let (open, keep) = AsyncStream.makeStream(of: Never.self)
                    for await _ in open {}
                    keep.finish()
                    self.ended.withLock { $0 += 1 }
                })
        }
    }

    private func difference(_ rows: [TaskRow], removed: [String] = [], at position: UInt64, replace: Bool = false) -> RowsPushEvent<TaskRow> {
        .difference(
            RowsDifference(cookie: Board.cookie(position), replace: replace, rows: Board.versioned(rows, counter: position), removed: removed))
    }

    @Test func socketsOpenFromTheCookieHeldAndTroubleCatchesUp() async throws {
        let store = try LocalStore.inMemory()
        let tasks = store.collection(Board.tasks, mutations: Board.TaskMutation.self)
        let scripted = ScriptedSource([
            // The first socket: the whole result, one difference, then a message it cannot read.
            [
                .openedHere, difference([Board.task("a", at: 1)], at: 5, replace: true), difference([Board.task("b", at: 2)], at: 6),
                .unreadable(CancellationError()),
            ],
            // The next, opened from the cookie held (6): the difference since, then it closes.
            [.openedHere, difference([], removed: ["a"], at: 8), .closed],
        ])
        let live = tasks.live(Board.project("p1"))
        let subscription = tasks.subscribe(scripted.source)
        #expect(
            await firstElement(of: live.updates(), within: .seconds(10)) { $0.map(\.id) == ["b"] } != nil, "never caught up: \(live.rows.map(\.id))")
        #expect(scripted.opened.value == [nil, Board.cookie(6)])
        #expect(tasks.cookie(of: subscription.key) == Board.cookie(8))
        #expect(subscription.status == .connecting)
        subscription.stop()
    }

    /// Closing the store closes the sockets of its subscriptions at once, not when their next
    /// message finds the store closed: a quiet subscription would keep its socket for good.
    /// The last subscription to a query stops while another subscribes to it, on two tasks:
    /// however the stop's write and the new subscription's interleave, the query runs and is
    /// not recorded as stopped (a stopped one's changes on top would wait for nothing).
    @Test func aStopRacingASubscriptionLeavesItRunning() async throws {
        let store = try LocalStore.inMemory()
        let tasks = store.collection(Board.tasks, mutations: Board.TaskMutation.self)
        let scripted = ScriptedSource(Array(repeating: [.openedHere], count: 400))
        for round in 0..<100 {
            let first = tasks.subscribe(scripted.source)
            async let stopped: Void = first.stop()
            async let again = tasks.subscribe(scripted.source)
            _ = await stopped
            let second = await again
            #expect(tasks.isPaused(second.key) == false, "round \(round): running, yet recorded as stopped")
            second.stop()
            #expect(tasks.isPaused(second.key) == true, "round \(round): stopped, yet not recorded so")
        }
    }

    @Test func closingTheStoreClosesItsSockets() async throws {
        let store = try LocalStore.inMemory()
        let tasks = store.collection(Board.tasks, mutations: Board.TaskMutation.self)
        let scripted = ScriptedSource([[.openedHere, difference([Board.task("a", at: 1)], at: 5, replace: true)]])
        let subscription = tasks.subscribe(scripted.source)
        // Its one message applied: nothing more comes on it.
        #expect(await eventually { tasks.cookie(of: subscription.key) == Board.cookie(5) }, "status \(subscription.status)")
        #expect(scripted.ended.value == 0)
        try store.close()
        #expect(await eventually { scripted.ended.value == 1 }, "the socket stayed open after the store closed")
        // Stopping it after changes nothing, and closing again is harmless.
        subscription.stop()
        try store.close()
        #expect(scripted.opened.value.count == 1)
    }

    /// A first sync whose request failed (a first launch offline, a server busy) is asked
    /// over HTTP again when the socket closes with no cookie held, before the next socket
    /// opens: the whole result never has to come as one socket frame.
    @Test func aFailedFirstSyncIsAskedAgainBeforeTheNextSocket() async throws {
        let store = try LocalStore.inMemory()
        let tasks = store.collection(Board.tasks, mutations: Board.TaskMutation.self)
        let failures = Locked(1)
        let scripted = ScriptedSource(
            [[.openedHere, .closed], [.openedHere]],
            answer: { _ in
                if failures.withLock({ count in
                    defer { count -= 1 }
                    return count > 0
                }) {
                    throw HTTPStatusError(status: 503)
                }
                return RowsDifference(
                    cookie: Board.cookie(5), replace: true, rows: Board.versioned([Board.task("a", at: 1)], counter: 5), removed: [])
            })
        let subscription = tasks.subscribe(scripted.source)
        #expect(await eventually { scripted.opened.value.count == 2 }, "sockets opened: \(scripted.opened.value)")
        #expect(scripted.fetched.value == [nil, nil])
        #expect(scripted.opened.value == [nil, Board.cookie(5)])
        #expect(tasks.cookie(of: subscription.key) == Board.cookie(5))
        subscription.stop()
    }

    @Test func aRefusedSocketAsksWhyAndA404TakesTheRowsOff() async throws {
        let store = try LocalStore.inMemory()
        let tasks = store.collection(Board.tasks, mutations: Board.TaskMutation.self)
        let scripted = ScriptedSource(
            [[.openedHere, difference([Board.task("a", at: 1)], at: 5, replace: true), .closed, .refused]],
            // The first sync's request fails (the server busy); the refusal's says 404.
            answer: { cookie in throw HTTPStatusError(status: cookie == nil ? 503 : 404) })
        let live = tasks.live(Board.project("p1"))
        let subscription = tasks.subscribe(scripted.source)
        #expect(await eventually { subscription.status == .refused }, "status \(subscription.status)")
        #expect(live.rows.isEmpty)
        // The first sync asked first (no cookie held), then the refusal asked why.
        #expect(scripted.fetched.value == [nil, Board.cookie(5)])
        subscription.stop()
    }

    /// Access back after a refusal: the next answer brings the rows back and the status leaves
    /// `.refused`. Each status is told once, in order, to the collection's activity.
    @Test func accessBackAfterARefusal() async throws {
        let store = try LocalStore.inMemory()
        let tasks = store.collection(Board.tasks, mutations: Board.TaskMutation.self)
        let asked = Locked(0)
        let scripted = ScriptedSource(
            [[.openedHere, difference([Board.task("a", at: 1)], at: 5, replace: true), .closed, .refused, .refused, .openedHere]],
            // The first sync fails; the first refusal's answer says 404; the next, the rows.
            answer: { cookie in
                let attempt = asked.withLock { count in
                    count += 1
                    return count
                }
                if attempt < 3 { throw HTTPStatusError(status: attempt == 1 ? 503 : 404) }
                return RowsDifference(
                    cookie: Board.cookie(9), replace: true, rows: Board.versioned([Board.task("b", at: 2)], counter: 9), removed: [])
            })
        let activity = tasks.activity()
        let live = tasks.live(Board.project("p1"))
        let subscription = tasks.subscribe(scripted.source)
        #expect(await eventually { subscription.status == .live && live.rows.map(\.id) == ["b"] }, "status \(subscription.status)")
        let statuses = Locked<[RowSubscription.Status]>([])
        let dropped = Locked<[Bool]>([])
        _ = await firstElement(of: activity, within: .seconds(10)) { event in
            switch event.kind {
            case .status(let status): statuses.withLock { $0.append(status) }
            case .dropped(let refused): dropped.withLock { $0.append(refused) }
            default: break
            }
            return statuses.value.count == 5
        }
        #expect(statuses.value == [.live, .connecting, .refused, .connecting, .live])
        #expect(dropped.value == [true])
        subscription.stop()
    }

    @Test func endingASubscriptionKeepsRowsAnotherHolds() async throws {
        let store = try LocalStore.inMemory()
        let tasks = store.collection(Board.tasks, mutations: Board.TaskMutation.self)
        let first = ScriptedSource([[.openedHere, difference([Board.task("a", at: 1), Board.task("b", at: 2)], at: 5, replace: true)]])
        let live = tasks.live(Board.project("p1"))
        let one = tasks.subscribe(first.source)
        #expect(await firstElement(of: live.updates(), within: .seconds(10)) { $0.count == 2 } != nil)
        // A second subscription (another query) holds b only.
        var other = ScriptedSource([[.openedHere, difference([Board.task("b", at: 2)], at: 5, replace: true)]]).source
        other.key = "tasks/open"
        let two = tasks.subscribe(other)
        #expect(await eventually { tasks.cookie(of: "tasks/open") != nil })
        try one.end()
        #expect(live.rows.map(\.id) == ["b"])
        two.stop()
    }

    /// Two subscriptions to one query (two screens) share its socket and cookie: one socket
    /// opened, synced while either runs; ending one while the other runs leaves the rows.
    @Test func subscriptionsToOneQueryShareItsSocket() async throws {
        let store = try LocalStore.inMemory()
        let tasks = store.collection(Board.tasks, mutations: Board.TaskMutation.self)
        let scripted = ScriptedSource([
            [.openedHere, difference([Board.task("a", at: 1)], at: 5, replace: true)],
            [.openedHere],
        ])
        let live = tasks.live(Board.project("p1"))
        let one = tasks.subscribe(scripted.source)
        let two = tasks.subscribe(scripted.source)
        // Live as the socket opens, before its first message is applied: both waited for.
        #expect(
            await eventually { one.status == .live && two.status == .live && live.rows.map(\.id) == ["a"] },
            "status \(one.status), \(two.status); rows \(live.rows.map(\.id))")
        #expect(scripted.opened.value == [nil], "one socket for both")
        // One ends: the other still syncs the query, rows and socket stay.
        try one.end()
        #expect(live.rows.map(\.id) == ["a"])
        #expect(two.status == .live)
        #expect(tasks.cookie(of: scripted.source.key) == Board.cookie(5))
        // Stopping it again changes nothing; the last one ending takes the rows off.
        one.stop()
        #expect(two.status == .live)
        try two.end()
        #expect(live.rows.isEmpty)
        // Ending one that was stopped first still takes its rows off (a source of its own for the
        // same query, so that its socket, if it opened one before the stop, takes no script).
        let stopped = tasks.subscribe(ScriptedSource([]).source)
        stopped.stop()
        try tasks.apply(
            RowsDifference(cookie: Board.cookie(7), replace: true, rows: Board.versioned([Board.task("c", at: 3)], counter: 7), removed: []),
            requestedWith: nil, to: scripted.source.key)
        #expect(live.rows.map(\.id) == ["c"])
        try stopped.end()
        #expect(live.rows.isEmpty)
        // A new subscription to it opens a socket of its own, from no cookie.
        let three = tasks.subscribe(scripted.source)
        #expect(await eventually { three.status == .live }, "status \(three.status)")
        #expect(scripted.opened.value == [nil, nil])
        three.stop()
    }
}

extension RowsPushEvent {
    /// In a script: "opened with the cookie the socket was given".
    static var openedHere: Self { .opened(cookie: "\u{1}") }

    static func == (lhs: Self, rhs: Self) -> Bool {
        if case .opened(let a) = lhs, case .opened(let b) = rhs { return a == b }
        return false
    }
}
