import Dispatch
import Foundation
import Logging
import ServerTestApp
import ServiceLifecycle
import StateLoopServerTesting
import StateLoopTesting
import Synchronization
import TestSupport
import Testing

@testable import StateLoopServer

/// The timed update on a test clock: it runs what is due when it is due, never before, never
/// later than the clock says, and goes on through failures until the graceful shutdown.
@Suite("Timed updates", .timeLimit(.minutes(5)))
struct TimedUpdateTests {
    static let start = Date(timeIntervalSince1970: 1_800_000_000)

    /// Reminders by name, each with the time it falls due.
    static let reminders = ServerResource("reminders", of: [String: Date].self)
    /// The reminders that fired, in order.
    static let fired = ServerResource("fired", of: [String].self)

    /// The earliest reminder's time.
    static func earliest(in transaction: ServerTransaction) throws -> Date? {
        try transaction.read(reminders, "all")?.values.min()
    }

    /// Fires the reminders due at `now`; returns the next one's time.
    static func fire(at now: Date, in transaction: ServerTransaction) throws -> Date? {
        var pending = try transaction.read(reminders, "all") ?? [:]
        let due = pending.filter { $0.value <= now }.sorted { ($0.value, $0.key) < ($1.value, $1.key) }.map(\.key)
        for name in due { pending[name] = nil }
        try transaction.write(pending, to: reminders, "all")
        try transaction.write((try transaction.read(fired, "all") ?? []) + due, to: fired, "all")
        return pending.values.min()
    }

    /// A server on an in-memory store with `due` reminders (seconds after ``start``).
    static func server(_ due: [String: Int], logger: Logger? = nil) async throws -> SyncServer<Notes.Rules> {
        var quiet = Logger(label: "stateloop.timed.test")
        quiet.logLevel = .critical
        let server = SyncServer(store: try SQLiteStore(), access: Notes.Rules(), logger: logger ?? quiet)
        try await server.update { transaction in
            try transaction.write(due.mapValues { Self.start.addingTimeInterval(Double($0)) }, to: reminders, "all")
        }
        return server
    }

    static func firedNames(on server: SyncServer<Notes.Rules>) async throws -> [String] {
        try await server.read { try $0.read(fired, "all") ?? [] }
    }

    static func timedUpdate(
        on server: SyncServer<Notes.Rules>, clock: TestClock, maximumPause: Duration = .seconds(60),
        nextDeadline: @escaping @Sendable (ServerTransaction) throws -> Date? = { try earliest(in: $0) }
    ) -> TimedUpdate<Notes.Rules> {
        TimedUpdate("reminders", on: server, clock: WallClock(clock, startingAt: start), maximumPause: maximumPause, nextDeadline: nextDeadline) {
            transaction, now in try fire(at: now, in: transaction)
        }
    }

    /// Waits until the timed update sleeps on `clock`, for a bounded time: one that ended, or
    /// never went to sleep, fails the test rather than hanging it.
    static func asleep(on clock: TestClock) async throws {
        try #require(await eventually(within: .seconds(10)) { clock.sleeperCount >= 1 }, "the timed update does not sleep on the clock")
    }

    @Test("it runs what is due at its deadline, not before, and sleeps until the next")
    func runsWhenDue() async throws {
        let clock = TestClock()
        let server = try await Self.server(["a": 10, "b": 20])
        let running = Task { try await Self.timedUpdate(on: server, clock: clock).run() }
        defer { running.cancel() }
        try await Self.asleep(on: clock)
        await clock.advance(by: .milliseconds(9_999))
        try await Self.asleep(on: clock)
        #expect(try await Self.firedNames(on: server) == [], "ran before its deadline")
        await clock.advance(by: .milliseconds(1))
        #expect(await eventually(within: .seconds(10)) { (try? await Self.firedNames(on: server)) == ["a"] }, "did not run at its deadline")
        try await Self.asleep(on: clock)
        await clock.advance(by: .milliseconds(9_999))
        try await Self.asleep(on: clock)
        #expect(try await Self.firedNames(on: server) == ["a"])
        await clock.advance(by: .milliseconds(1))
        #expect(await eventually(within: .seconds(10)) { (try? await Self.firedNames(on: server)) == ["a", "b"] })
    }

    @Test("a deadline that passed while it was busy runs at once, not a pause later")
    func passedDeadlineNotPushedLater() async throws {
        let clock = TestClock()
        let server = try await Self.server(["a": 5, "b": 10])
        // The second read holds its wake until the test has moved the clock 30 s on.
        let reads = Count()
        let inSecondRead = DispatchSemaphore(value: 0)
        let release = DispatchSemaphore(value: 0)
        let update = Self.timedUpdate(on: server, clock: clock) { transaction in
            if reads.next() == 2 {
                inSecondRead.signal()
                _ = release.wait(timeout: .now() + 30)
            }
            return try Self.earliest(in: transaction)
        }
        let running = Task { try await update.run() }
        defer { running.cancel() }
        try await Self.asleep(on: clock)
        await clock.advance(by: .seconds(5))
        let entered = await withCheckedContinuation { continuation in
            DispatchQueue.global().async {
                continuation.resume(returning: inSecondRead.wait(timeout: .now() + 30) == .success)
            }
        }
        try #require(entered, "the timed update did not read again at 5 s")
        await clock.advance(by: .seconds(30))
        release.signal()
        // "a" fires at 5 s; "b", due at 10 s, has passed by then: it fires without the clock
        // moving again (a sleep of 5 s taken after the busy read would wait for 40 s).
        #expect(await eventually(within: .seconds(10)) { (try? await Self.firedNames(on: server)) == ["a", "b"] }, "b waits for a later wake")
    }

    @Test("a failure is logged as a warning and tried again after the maximum pause")
    func failureLoggedAndRetried() async throws {
        let clock = TestClock()
        let log = LogRecorder()
        let server = try await Self.server(["a": 0], logger: Logger(label: "stateloop.timed.test") { _ in log })
        struct StoreAway: Error {}
        let reads = Count()
        let update = Self.timedUpdate(on: server, clock: clock, maximumPause: .seconds(5)) { transaction in
            if reads.next() == 1 { throw StoreAway() }
            return try Self.earliest(in: transaction)
        }
        let running = Task { try await update.run() }
        defer { running.cancel() }
        try await Self.asleep(on: clock)
        #expect(log.messages.filter { $0.hasPrefix("warning") } == ["warning timed update failed error=StoreAway() update=reminders"])
        #expect(try await Self.firedNames(on: server) == [])
        await clock.advance(by: .seconds(5))
        #expect(await eventually(within: .seconds(10)) { (try? await Self.firedNames(on: server)) == ["a"] }, "not tried again")
    }

    @Test("it ends with the service group's graceful shutdown, and only then")
    func endsWithGracefulShutdown() async throws {
        let clock = TestClock()
        let server = try await Self.server([:])
        var logger = Logger(label: "stateloop.timed.test")
        logger.logLevel = .critical
        let group = ServiceGroup(services: [Self.timedUpdate(on: server, clock: clock, maximumPause: .seconds(1))], logger: logger)
        let ended = Latest<Bool>()
        let running = Task {
            try await group.run()
            ended.set(true)
        }
        // Nothing is ever due: it keeps reading every pause, and does not end the group.
        for _ in 0..<3 {
            try await Self.asleep(on: clock)
            await clock.advance(by: .seconds(1))
        }
        try await Self.asleep(on: clock)
        #expect(ended.value == nil)
        await group.triggerGracefulShutdown()
        #expect(await eventually(within: .seconds(10)) { ended.value == true }, "the group did not end")
        running.cancel()
    }

    @Test("what it writes reaches the push sockets that follow it, like any update")
    func writesArePushed() async throws {
        let clock = TestClock()
        let server = try await Self.server(["a": 60])
        Notes.declare(on: server)
        try await server.update { try $0.write(1, to: Notes.board, "main") }
        let update = TimedUpdate("board", on: server, clock: WallClock(clock, startingAt: Self.start)) { transaction in
            try Self.earliest(in: transaction)
        } update: { transaction, now in
            try transaction.write((try transaction.read(Notes.board, "main") ?? 0) + 1, to: Notes.board, "main")
            return try Self.fire(at: now, in: transaction)
        }
        try await withRunning(server) { port in
            let running = Task { try await update.run() }
            defer { running.cancel() }
            let reader = TestPushSocket(port: port, path: "board/push", as: "bob")
            defer { reader.cancel() }
            #expect(await eventually(within: .seconds(20)) { reader.received.count == 1 })
            try await Self.asleep(on: clock)
            await clock.advance(by: .seconds(60))
            #expect(await eventually(within: .seconds(20)) { reader.values(Int.self).map(\.value) == [1, 2] }, "\(reader.received)")
        }
    }
}

/// How many times something ran.
final class Count: Sendable {
    private let count = Mutex(0)

    /// Counts one more; returns the count.
    func next() -> Int {
        count.withLock { count in
            count += 1
            return count
        }
    }
}
