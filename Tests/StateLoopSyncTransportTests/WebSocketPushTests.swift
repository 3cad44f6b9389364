import Foundation
import HTTPTypes
import Hummingbird
import HummingbirdWebSocket
import Logging
import StateLoopSync
import Synchronization
import Testing

@testable import StateLoopSyncTransports

/// A clock whose time moves only when someone sleeps on it or the test advances it, and which
/// records every sleep: the backoffs of a push source, exactly, without waiting for them.
final class VirtualClock: Clock, Sendable {
    struct Instant: InstantProtocol {
        var offset: Duration

        func advanced(by duration: Duration) -> Instant { Instant(offset: offset + duration) }
        func duration(to other: Instant) -> Duration { other.offset - offset }
        static func < (lhs: Instant, rhs: Instant) -> Bool { lhs.offset < rhs.offset }
    }

    private let current = Mutex(Instant(offset: .zero))
    let sleeps = Inbox<Duration>()

    var now: Instant { current.withLock { $0 } }
    var minimumResolution: Duration { .zero }

    func sleep(until deadline: Instant, tolerance: Duration?) async throws {
        let slept = current.withLock { now in
            defer { now = max(now, deadline) }
            return now.duration(to: deadline)
        }
        sleeps.put(slept)
        // Lets the test and the server run between two reconnections.
        await Task.yield()
        try Task.checkCancellation()
    }

    func advance(by duration: Duration) {
        current.withLock { $0 = $0.advanced(by: duration) }
    }
}

/// What a WebSocket server did: the time of each upgrade, and a way to hold one connection open.
final class SocketServerLog: Sendable {
    let upgrades = Inbox<ContinuousClock.Instant>()
    /// The connection (by its number, from 1) kept open until ``release()``; the others close
    /// as soon as they are open.
    let held: Int?
    private let (released, releaseContinuation) = AsyncStream.makeStream(of: Void.self)

    init(holding held: Int? = nil) {
        self.held = held
    }

    func release() {
        releaseContinuation.yield()
    }

    /// Serves one connection: sends `messages`, then closes at once unless it is the one held.
    func serve(_ outbound: WebSocketOutboundWriter, messages: [String]) async {
        upgrades.put(.now)
        for message in messages {
            try? await outbound.write(.text(message))
        }
        if upgrades.elements.count == held {
            for await _ in released { break }
        }
    }
}

/// Routers for a WebSocket server on `/push` whose connections `log` serves, each sent
/// `messages`.
private func socketRouters(
    _ log: SocketServerLog, messages: [String] = []
) -> (Router<BasicRequestContext>, Router<BasicWebSocketRequestContext>) {
    let sockets = Router(context: BasicWebSocketRequestContext.self)
    sockets.ws("push") { _, _ in
        .upgrade()
    } onUpgrade: { _, outbound, _ in
        await log.serve(outbound, messages: messages)
    }
    return (Router(), sockets)
}

/// The push source's messages, and the end of its `run`.
private func collect(_ push: WebSocketPush<String>) -> (Inbox<PushMessage<String>>, Task<Void, Never>) {
    let received = Inbox<PushMessage<String>>()
    let task = Task { await push.run { received.put($0) } }
    return (received, task)
}

/// Real sockets on loopback, so this suite waits on the real clock; every wait is bounded.
@Suite("WebSocket push against a hostile server", .timeLimit(.minutes(6)))
struct WebSocketPushTests {
    @Test("a server that closes every connection at once is met with a doubling backoff, not a reconnection storm")
    func backoffOnImmediateClose() async throws {
        let log = SocketServerLog()
        let (router, sockets) = socketRouters(log)
        try await withLoopback(router, sockets: sockets) { port in
            // A short ping: now and then swift-websocket loses track of a connection closed right
            // after the upgrade, and only a ping finds it dead.
            let push = WebSocketPush<String>(
                url: "ws://127.0.0.1:\(port)/push", initialBackoff: .milliseconds(40), maxBackoff: .milliseconds(320),
                pingInterval: .milliseconds(500)
            )
            let (_, task) = collect(push)
            defer { task.cancel() }
            // Six connections take 40 + 80 + 160 + 320 + 320 ms of backoff at least; with the
            // backoff reset by each connection they came every 40 ms.
            // 30 s: a hang guard for a loaded machine (10 s was missed beside two CPU hogs and a
            // build); the gaps below are the test.
            let times = try await log.upgrades.waitFor(6, seconds: 30)
            let gaps = zip(times, times.dropFirst()).map { $0.duration(to: $1) }
            for (gap, backoff) in zip(gaps, [40, 80, 160, 320, 320]) {
                #expect(gap >= .milliseconds(backoff), "gaps: \(gaps)")
            }
            // The ones after the sixth keep the maximum backoff between them (judged on the
            // server's arrival times: the test's own wake-up may come late on a loaded machine).
            try await Task.sleep(for: .seconds(1))
            let later = log.upgrades.elements.dropFirst(5)
            let laterGaps = zip(later, later.dropFirst()).map { $0.duration(to: $1) }
            #expect(laterGaps.allSatisfy { $0 >= .milliseconds(300) }, "gaps after the sixth: \(laterGaps)")
        }
    }

    @Test("the backoff starts again only after a connection that lasted healthyAfter on the push source's clock")
    func backoffResetByHealthyConnection() async throws {
        let log = SocketServerLog(holding: 4)
        let (router, sockets) = socketRouters(log)
        try await withLoopback(router, sockets: sockets) { port in
            let clock = VirtualClock()
            let connections = Inbox<Bool>()
            let push = WebSocketPush<String>(
                url: "ws://127.0.0.1:\(port)/push", initialBackoff: .seconds(1), maxBackoff: .seconds(8),
                healthyAfter: .seconds(5), pingInterval: .milliseconds(500), clock: clock,
                onConnectionChange: { connections.put($0) }
            )
            let (_, task) = collect(push)
            defer { task.cancel() }
            // Three connections closed at once: 1, 2 and 4 s of backoff. The fourth is held.
            _ = try await connections.waitFor(7)
            #expect(clock.sleeps.elements == [.seconds(1), .seconds(2), .seconds(4)])
            clock.advance(by: .seconds(5))
            log.release()
            // Healthy, so 1 s again; then 2 s after the fifth, closed at once.
            let sleeps = try await clock.sleeps.waitFor(5)
            #expect(Array(sleeps.prefix(5)) == [.seconds(1), .seconds(2), .seconds(4), .seconds(1), .seconds(2)])
        }
    }

    @Test("an upgrade refused with 401 or 403 is reported once as PushRefusedError, for the resource to pull and learn why")
    func refusedForAuthorization() async throws {
        for status in [HTTPResponse.Status.unauthorized, .forbidden] {
            let requests = Shared(0)
            let router = Router()
            // A plain HTTP server: the upgrade request is answered like any GET.
            router.get("push") { _, _ in
                requests.update { $0 += 1 }
                return Response(status: status)
            }
            try await withLoopback(router) { port in
                let push = WebSocketPush<String>(url: "ws://127.0.0.1:\(port)/push", initialBackoff: .milliseconds(10))
                let (received, task) = collect(push)
                defer { task.cancel() }
                let first = try await received.waitFor(1)
                #expect(first.count == 1)
                if case .failed(let error)? = first.first {
                    #expect(error is PushRefusedError)
                } else {
                    Issue.record("expected .failed(PushRefusedError), got \(first)")
                }
            }
            #expect(requests.value >= 1)
        }
    }

    @Test(
        "an upgrade refused otherwise (400, as Hummingbird answers any refusal) is retried with backoff, and reported once so that a pull finds out why"
    )
    func refusedOtherwise() async throws {
        let attempts = Inbox<Void>()
        let sockets = Router(context: BasicWebSocketRequestContext.self)
        sockets.ws("push") { _, _ in
            attempts.put(())
            return .dontUpgrade
        } onUpgrade: { _, _, _ in
        }
        try await withLoopback(Router(), sockets: sockets) { port in
            let push = WebSocketPush<String>(url: "ws://127.0.0.1:\(port)/push", initialBackoff: .milliseconds(10))
            let (received, task) = collect(push)
            defer { task.cancel() }
            _ = try await attempts.waitFor(3)
            let reported = received.elements
            #expect(reported.count == 1, "reported once per outage: \(reported)")
            if case .failed(let error)? = reported.first {
                #expect(error is PushRefusedError)
            } else {
                Issue.record("expected one .failed(PushRefusedError), got \(reported)")
            }
        }
    }

    /// Polls `condition` every 20 ms for 30 s at most.
    private func eventuallyTrue(_ condition: () -> Bool) async -> Bool {
        for _ in 0..<1_500 {
            if condition() { return true }
            try? await Task.sleep(for: .milliseconds(20))
        }
        return false
    }

    @Test(
        "a server refusing as it stops, then gone: each attempt that reaches no server says offline again, though the refusal said the network was up"
    )
    func refusalThenGone() async throws {
        let attempts = Inbox<Void>()
        let changes = Inbox<Bool>()
        let sockets = Router(context: BasicWebSocketRequestContext.self)
        sockets.ws("push") { _, _ in
            attempts.put(())
            return .dontUpgrade
        } onUpgrade: { _, _, _ in
        }
        var push: WebSocketPush<String>?
        var task: Task<Void, Never>?
        var received: Inbox<PushMessage<String>>?
        var port = 0
        try await withLoopback(Router(), sockets: sockets) { bound in
            port = bound
            let source = WebSocketPush<String>(
                url: "ws://127.0.0.1:\(bound)/push", initialBackoff: .milliseconds(10), maxBackoff: .milliseconds(40),
                onConnectionChange: { changes.put($0) }
            )
            push = source
            let (inbox, reading) = collect(source)
            received = inbox
            task = reading
            _ = try await attempts.waitFor(1)
        }
        defer { task?.cancel() }
        // The server is gone: its port refuses connections. Without a report, the resource
        // would hold on to the refusal's "online" while nothing answers.
        let reported = try await changes.waitFor(1)
        #expect(reported.first == false, "\(reported)")
        // Back on its port, still refusing (a restarted server that forgot the session): the
        // refusal is reported again, so that the resource, offline now, pulls and finds out.
        let refusalsBefore = received?.elements.count ?? 0
        try await withLoopback(Router(), sockets: sockets, port: port) { _ in
            let again = await eventuallyTrue { (received?.elements.count ?? 0) > refusalsBefore }
            #expect(again, "the refusal after the outage was not reported")
        }
        _ = push
    }

    @Test("a message that cannot be decoded is reported as .failed(PushDecodingError) with its start; good ones still arrive")
    func undecodableMessage() async throws {
        let garbage = "hello \u{1B}[2J" + String(repeating: "x", count: 300)
        let messages = [
            garbage,
            #"{"version":{"epoch":0,"counter":2}}"#,
            #"{"changed":false}"#,
            #"{"version":{"epoch":0,"counter":3},"value":"three"}"#,
        ]
        let log = SocketServerLog(holding: 1)
        let (router, sockets) = socketRouters(log, messages: messages)
        try await withLoopback(router, sockets: sockets) { port in
            let (received, task) = collect(WebSocketPush<String>(url: "ws://127.0.0.1:\(port)/push"))
            defer { task.cancel() }
            let all = try await received.waitFor(3)
            defer { log.release() }
            guard case .failed(let first as PushDecodingError) = all[0], case .failed(let second as PushDecodingError) = all[1] else {
                Issue.record("expected two decoding failures, got \(all)")
                return
            }
            #expect(first.excerpt == String(garbage.prefix(100)))
            #expect(first.isTruncated)
            #expect(first.problem == "The given data was not valid JSON.")
            #expect(first.description.hasPrefix(#"undecodable push message (The given data was not valid JSON.): "hello \u{1B}[2Jxxx"#))
            #expect(!first.description.contains("\u{1B}"), "the description escapes control characters")
            #expect(second.problem == #"no "value""#)
            #expect(!second.isTruncated)
            #expect(all[2] == .value(Versioned("three", version: Version(counter: 3))), "{\"changed\": false} says nothing")
        }
    }

    @Test("a message over the size limit ends the connection, is logged, and the reconnection backs off")
    func oversizedMessage() async throws {
        let oversized = #"{"version":{"epoch":0,"counter":2},"value":""# + String(repeating: "x", count: 1 << 20) + #""}"#
        let log = SocketServerLog()
        let (router, sockets) = socketRouters(log, messages: [oversized])
        try await withLoopback(router, sockets: sockets) { port in
            let warnings = Inbox<String>()
            let push = WebSocketPush<String>(
                url: "ws://127.0.0.1:\(port)/push", initialBackoff: .milliseconds(40), maxBackoff: .milliseconds(320),
                pingInterval: .milliseconds(500),
                logger: Logger(label: "test") { _ in CapturingLogHandler(messages: warnings) }
            )
            let (received, task) = collect(push)
            defer { task.cancel() }
            let times = try await log.upgrades.waitFor(3)
            #expect(times[0].duration(to: times[1]) >= .milliseconds(40))
            #expect(times[1].duration(to: times[2]) >= .milliseconds(80))
            let logged = try await warnings.waitFor(1)
            // A frame over the limit ends the connection without a close; a message over it, sent
            // in frames, with one: either is logged as a warning about the limit.
            #expect(logged[0].hasPrefix("warning: push connection") && logged[0].contains("over the limit"), "\(logged)")
            #expect(!received.elements.contains { if case .value = $0 { true } else { false } })
        }
    }
}
