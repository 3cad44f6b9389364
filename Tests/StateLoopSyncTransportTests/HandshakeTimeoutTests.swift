import Foundation
import HTTPTypes
import Hummingbird
import HummingbirdWebSocket
import Logging
import NIOCore
import NIOPosix
import StateLoopSync
import StateLoopSyncTransports
import Synchronization
import TestSupport
import Testing

/// Push upgrades a server never answers. A server stopping mid-upgrade reads the request and
/// closes its side without a word; swift-websocket keeps such half-closed connections open and
/// waits for the answer forever, and a push source that waited with it would never connect
/// again (its resource offline for good: found by the Nightride chaos run across a server
/// restart).
@Suite("WebSocket push: unanswered upgrades", .timeLimit(.minutes(6)))
struct HandshakeTimeoutTests {
    @Test("an upgrade the server reads and never answers is given up after handshakeTimeout and tried again; nothing is reported as connected")
    func unansweredUpgradeRetried() async throws {
        try await withHalfClosingServer { port, requests in
            let changes = Inbox<Bool>()
            let warnings = Inbox<String>()
            let push = WebSocketPush<String>(
                url: "ws://127.0.0.1:\(port)/push", initialBackoff: .milliseconds(20), maxBackoff: .milliseconds(20),
                handshakeTimeout: .milliseconds(200),
                logger: Logger(label: "test") { _ in CapturingLogHandler(messages: warnings) },
                onConnectionChange: { changes.put($0) }
            )
            let received = Inbox<PushMessage<String>>()
            let began = ContinuousClock.now
            let task = Task { await push.run { received.put($0) } }
            defer { task.cancel() }

            // Without the deadline the first request is the last.
            let times = try await requests.waitFor(3, seconds: 30)
            // Measured from before the source started, which only load can make later: two
            // deadlines of 200 ms and two backoffs of 20 ms come before the third request, where
            // retrying without waiting would take 40 ms. The deadline itself is read from the log.
            let span = began.duration(to: times[2])
            #expect(span >= .milliseconds(400), "three attempts within \(span)")
            #expect(warnings.elements.contains { $0.contains("within 0.2 seconds") }, "\(warnings.elements)")
            #expect(changes.elements.isEmpty, "never connected, so never lost either")
            #expect(received.elements.isEmpty, "no hint, no refusal: the server said nothing")
            #expect(warnings.elements.contains { $0.contains("push upgrade unanswered") }, "\(warnings.elements)")
            // Each attempt given up is closed with its socket: the server keeps its side open,
            // so a socket left behind would still be counted (one per attempt, until the
            // process ran out of descriptors).
            let open = await openSockets(to: port, atMost: 1)
            #expect(open <= 1, "sockets to the server after \(requests.elements.count) attempts: \(open)")
        }
    }

    @Test(
        "with firstHandshakeTimeout, the first attempt waits that long (a restarted server costs about a second); each unanswered one doubles the wait, up to handshakeTimeout"
    )
    func deadlineGrows() async throws {
        try await withHalfClosingServer { port, requests in
            let warnings = Inbox<String>()
            let push = WebSocketPush<String>(
                url: "ws://127.0.0.1:\(port)/push", initialBackoff: .milliseconds(10), maxBackoff: .milliseconds(10),
                handshakeTimeout: .milliseconds(2_500), firstHandshakeTimeout: .seconds(1),
                logger: Logger(label: "test") { _ in CapturingLogHandler(messages: warnings) }
            )
            let began = ContinuousClock.now
            let task = Task { await push.run { _ in } }
            defer { task.cancel() }
            let times = try await requests.waitFor(4, seconds: 30)
            // The deadlines as each attempt was given up: read from the log, since a loaded
            // machine can wake the deadline late but never early.
            let deadlines = warnings.elements.prefix(3).map { $0.components(separatedBy: "within ").last?.components(separatedBy: ":").first ?? $0 }
            #expect(deadlines == ["1.0 seconds", "2.0 seconds", "2.5 seconds"], "\(warnings.elements)")
            // Measured from before the source started, which only load can make later: 5.5 s
            // of deadlines and three backoffs come before the fourth request (a flat first
            // deadline would take 3 s); the deadlines themselves are the log's.
            let span = began.duration(to: times[3])
            #expect(span >= .milliseconds(5_500), "four attempts within \(span)")
        }
    }

    @Test("a source stopped while its upgrade hangs returns at once, long before the deadline")
    func cancelledWhileHanging() async throws {
        try await withHalfClosingServer { port, requests in
            let push = WebSocketPush<String>(url: "ws://127.0.0.1:\(port)/push", handshakeTimeout: .seconds(60))
            let returned = Inbox<Void>()
            let task = Task {
                await push.run { _ in }
                returned.put(())
            }
            _ = try await requests.waitFor(1)
            task.cancel()
            // Polled rather than awaited: a run that hangs must fail this test, not stall it.
            _ = try await returned.waitFor(1, seconds: 30)
        }
    }

    @Test(
        "an upgrade answered after its deadline never becomes a connection: its socket was closed at the deadline, the source never reports two connections, and the live one brings a hint to pull"
    )
    func lateUpgradeTurnedAway() async throws {
        let attempts = UpgradeAttempts()
        let served = Inbox<Int>()
        let ended = Inbox<Int>()
        let sockets = Router(context: BasicWebSocketRequestContext.self)
        sockets.ws("push") { request, _ in
            let attempt = attempts.arrived(request.headers)
            // The first answer waits for the second attempt's request: the source starts it
            // only once it gave the first up, so the answer is late however slowly either side
            // runs (a fixed delay was not, beside CPU hogs: the client's deadline could fire
            // after it).
            if attempt == 1 {
                let retried = await polled { attempts.count >= 2 }
                if !retried { throw HTTPError(.serviceUnavailable) }
            }
            return .upgrade()
        } onUpgrade: { inbound, outbound, context in
            let attempt = attempts.number(of: context.request.headers)
            served.put(attempt)
            try? await outbound.write(.text(#"{"version":{"epoch":0,"counter":1},"value":"from attempt \#(attempt)"}"#))
            // A reset ends the read with an error: the client is gone either way.
            do { for try await _ in inbound {} } catch {}
            ended.put(attempt)
        }
        try await withLoopback(Router(), sockets: sockets) { port in
            let changes = Inbox<Bool>()
            let push = WebSocketPush<String>(
                url: "ws://127.0.0.1:\(port)/push", initialBackoff: .milliseconds(20), handshakeTimeout: .milliseconds(500),
                onConnectionChange: { changes.put($0) }
            )
            let received = Inbox<PushMessage<String>>()
            let task = Task { await push.run { received.put($0) } }
            defer { task.cancel() }

            // A later attempt connects. The first was given up before it, its socket closed
            // then: the server, answering it now, finds the client gone and its handler ends.
            _ = try await changes.waitFor(1)
            // Only the first is waited for: a later attempt may be late too on a busy machine
            // (its deadline is 500 ms), and then it ends as well.
            let firstEnded = await polled { ended.elements.contains(1) }
            #expect(firstEnded, "served \(served.elements), ended \(ended.elements)")
            let valueCame = await polled { received.elements.contains { if case .value = $0 { true } else { false } } }
            #expect(valueCame, "the live connection's value: \(received.elements)")
            #expect(changes.elements == [true], "one connection, still open: \(changes.elements)")
            let values = received.elements.compactMap { message -> String? in
                if case .value(let versioned) = message { versioned.value } else { nil }
            }
            #expect(!values.isEmpty && !values.contains("from attempt 1"), "\(received.elements)")
            // The live connection is not the first attempt's: a change may have been pushed to
            // the one turned away, so a hint has the resource pull.
            #expect(received.elements.contains { if case .changed = $0 { true } else { false } }, "\(received.elements)")
            // The live connection's socket only.
            #expect(await openSockets(to: port, atMost: 1) == 1)
        }
    }

    @Test(
        "upgrades answered around their deadline, either side of it: each becomes the connection (its value received) or is closed by the client, never left open; no value comes from one turned away"
    )
    func upgradesRacingTheDeadline() async throws {
        let attempts = UpgradeAttempts()
        // Attempts whose value the client received: the server closes those itself, so that
        // the source tries again.
        let accepted = Inbox<Int>()
        let endings = Inbox<Ending>()
        // Attempts whose socket the server upgraded (not every one: a client gone before the
        // answer may leave nothing to upgrade).
        let served = Inbox<Int>()
        let attemptsRaced = 32
        // Answers from 4 ms before the 100 ms deadline to 10 ms after it, so that the answer
        // and the deadline race in both orders.
        let offsets = [-4, -2, 0, 1, 2, 3, 5, 10]
        let sockets = Router(context: BasicWebSocketRequestContext.self)
        sockets.ws("push") { request, _ in
            let attempt = attempts.arrived(request.headers)
            // Past the race, refused: the client has settled every attempt before it makes the
            // next, so the request of the first refused one means every raced one is settled.
            guard attempt <= attemptsRaced else { throw HTTPError(.serviceUnavailable) }
            try await Task.sleep(for: .milliseconds(100 + offsets[attempt % offsets.count]))
            return .upgrade()
        } onUpgrade: { inbound, outbound, context in
            let attempt = attempts.number(of: context.request.headers)
            served.put(attempt)
            try? await outbound.write(.text(#"{"version":{"epoch":0,"counter":1},"value":"\#(attempt)"}"#))
            let byClient = await withTaskGroup(of: Bool?.self) { group in
                group.addTask {
                    do { for try await _ in inbound {} } catch {}
                    return true
                }
                group.addTask {
                    await polled { accepted.elements.contains(attempt) } ? false : nil
                }
                let first = await group.next() ?? nil
                group.cancelAll()
                return first
            }
            endings.put(Ending(attempt: attempt, byClient: byClient))
        }
        // Without the server's pings, which would end a socket the client left open (unanswered,
        // after a minute) as if the client had closed it.
        try await withLoopback(Router(), sockets: sockets, webSocket: .init(autoPing: .disabled)) { port in
            let changes = Inbox<Bool>()
            let push = WebSocketPush<String>(
                url: "ws://127.0.0.1:\(port)/push", initialBackoff: .milliseconds(5), maxBackoff: .milliseconds(5),
                handshakeTimeout: .milliseconds(100), onConnectionChange: { changes.put($0) }
            )
            let task = Task {
                await push.run { message in
                    if case .value(let versioned) = message, let attempt = Int(versioned.value) {
                        accepted.put(attempt)
                    }
                }
            }
            defer { task.cancel() }
            // Every upgraded attempt's ending, once the race is over: one left open by the client
            // ends only at the hang guard, as not closed by the client (`nil`).
            let settled = await polled { attempts.count > attemptsRaced }
            #expect(settled, "the source stopped trying after \(attempts.count) attempts")
            let allEnded = await polled(within: .seconds(50)) {
                Set(endings.elements.map(\.attempt)).isSuperset(of: served.elements)
            }
            #expect(allEnded, "upgraded \(served.elements.sorted()), ended \(endings.elements.map(\.attempt).sorted())")
            let ended = endings.elements
            let leftOpen = ended.filter { $0.byClient == nil }.map(\.attempt)
            #expect(leftOpen.isEmpty, "turned away, and never closed by the client: attempts \(leftOpen)")
            let acceptedNow = Set(accepted.elements)
            for ending in ended where ending.byClient != nil {
                #expect(
                    ending.byClient == !acceptedNow.contains(ending.attempt),
                    "attempt \(ending.attempt): \(ending.byClient == true ? "closed by the client, yet its value was received" : "closed by the server, its value never received")"
                )
            }
            // Each connection the source reported carried a value; none came from an attempt
            // turned away (that one would have been closed by the client first).
            let connections = changes.elements.filter { $0 }.count
            #expect(connections >= acceptedNow.count, "\(connections) connections, values from \(acceptedNow.count) attempts")
        }
    }

    /// Whether `condition` holds, checked every 5 ms for at most `limit` (times
    /// ``hangGuardScale``) or until the task is cancelled: the server's handlers wait with it
    /// without spinning a core, as `eventually` would for that long.
    private func polled(within limit: Duration = .seconds(30), _ condition: @Sendable () -> Bool) async -> Bool {
        let deadline = ContinuousClock.now + limit * hangGuardScale
        while !condition() {
            guard ContinuousClock.now < deadline else { return false }
            // Cancelled (the other side of a race ended first): a sleep that throws at once
            // would make this loop spin.
            do { try await Task.sleep(for: .milliseconds(5)) } catch { return condition() }
        }
        return true
    }

    /// How the server's side of one upgraded attempt ended: closed by the client, by the
    /// server once the client had its value, or `nil` when neither came within the hang guard.
    private struct Ending: Sendable {
        let attempt: Int
        let byClient: Bool?
    }

    /// A TCP server on loopback that reads each request head and then closes its side, as a
    /// server stopping mid-upgrade does; `body` gets its port and the time of each request.
    private func withHalfClosingServer(_ body: (Int, Inbox<ContinuousClock.Instant>) async throws -> Void) async throws {
        let requests = Inbox<ContinuousClock.Instant>()
        let channel = try await ServerBootstrap(group: MultiThreadedEventLoopGroup.singleton)
            .serverChannelOption(ChannelOptions.socketOption(.so_reuseaddr), value: 1)
            .childChannelInitializer { channel in
                channel.eventLoop.makeCompletedFuture {
                    try channel.pipeline.syncOperations.addHandler(HalfCloseAfterHead(requests: requests))
                }
            }
            .bind(host: "127.0.0.1", port: 0)
            .get()
        do {
            try await body(try #require(channel.localAddress?.port), requests)
        } catch {
            try? await channel.close()
            throw error
        }
        try? await channel.close()
    }
}

/// The upgrade requests a test server has had, numbered from 1 in the order they arrived and told
/// apart by their WebSocket keys (one per request).
private final class UpgradeAttempts: Sendable {
    private let numbers = Mutex<[String: Int]>([:])

    /// Numbers the request with these `headers`.
    func arrived(_ headers: HTTPFields) -> Int {
        numbers.withLock {
            $0[headers[.secWebSocketKey] ?? ""] = $0.count + 1
            return $0.count
        }
    }

    /// The number of the request whose upgrade these `headers` are.
    func number(of headers: HTTPFields) -> Int {
        numbers.withLock { $0[headers[.secWebSocketKey] ?? ""] ?? 0 }
    }

    /// How many requests have arrived.
    var count: Int {
        numbers.withLock { $0.count }
    }
}

/// Reads bytes until the end of a request head, then closes the output side of the connection.
private final class HalfCloseAfterHead: ChannelInboundHandler, @unchecked Sendable {
    typealias InboundIn = ByteBuffer
    private let requests: Inbox<ContinuousClock.Instant>
    private var head = ""

    init(requests: Inbox<ContinuousClock.Instant>) {
        self.requests = requests
    }

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        var buffer = unwrapInboundIn(data)
        head += buffer.readString(length: buffer.readableBytes) ?? ""
        if head.contains("\r\n\r\n") {
            head = ""
            requests.put(.now)
            context.close(mode: .output, promise: nil)
        }
    }
}
