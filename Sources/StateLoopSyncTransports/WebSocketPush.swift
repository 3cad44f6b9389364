import Foundation
import Logging
import StateLoopSync
import Synchronization

/// A push source over a WebSocket, with reconnection.
///
/// Each text message is JSON: a versioned value (`{"version": …, "value": …}`) or a bare hint
/// (`{"changed": true}`); any other message is reported as `PushMessage.failed(_:)` with a
/// ``PushDecodingError``, and the resource pulls instead. When the connection drops, it
/// reconnects after a backoff (doubling from `initialBackoff` up to `maxBackoff`), and every
/// connection but that of the first attempt is followed by a `.changed` hint, so the resource
/// pulls once to catch up on pushes it missed meanwhile. A refused upgrade is reported once per
/// outage as `.failed(PushRefusedError())`: the resource pulls to learn why, and a 401 there
/// makes it unauthorized, which cancels this source until the app signs in again.
///
/// Each attempt is one socket of its transport's: the network's (``NetworkTransport``) unless a
/// ``SyncEndpoint`` made it on another, such as a server in the same process.
public struct WebSocketPush<Value: Decodable & Sendable>: Sendable {
    /// The largest message accepted, in bytes, whole or in frames; a larger one ends the
    /// connection (and is logged), and the reconnection's pull fetches the value instead.
    private(set) var maximumMessageBytes = 1 << 20

    /// The address of each attempt, asked again at every one: a collection's socket carries the
    /// cookie its reader holds by then.
    private var address: @Sendable () -> String
    /// Reads one message that is not a hint: a versioned value by default.
    private var decodeValue: @Sendable (Data) throws -> Versioned<Value> = {
        try JSONDecoder().decode(VersionedPayload<Value>.self, from: $0).versioned
    }
    /// Whether every connection but the first is followed by a `.changed` hint. A collection's
    /// socket opens with the reader's cookie and its first message catches it up: it needs none.
    private var hintsOnReconnection = true
    private var headers: [String: String]
    private let initialBackoff: Duration
    private let maxBackoff: Duration
    private let healthyAfter: Duration
    private let pingInterval: Duration?
    private let handshakeTimeout: Duration
    private let firstHandshakeTimeout: Duration
    private let clock: any Clock<Duration>
    private let logger: Logger
    private var onConnectionChange: @Sendable (Bool) async -> Void
    /// What carries each attempt; `nil`, the network, with `pingInterval` and `logger`.
    private var transport: (any SyncTransport)?

    /// - Parameters:
    ///   - url: The `ws://` or `wss://` address.
    ///   - headers: Extra headers of the upgrade request (an `Authorization` bearer token, say).
    ///   - initialBackoff: The first wait before connecting again after an attempt that did not
    ///     give a healthy connection; it doubles after each such attempt.
    ///   - maxBackoff: The longest wait between two attempts, however many failed.
    ///   - healthyAfter: How long a connection must last, on `clock`, for the backoff to start
    ///     again from `initialBackoff` once it ends (one ended by a protocol failure never does).
    ///     A server that accepts and closes at once, sends a message over the limit or garbage,
    ///     or answers the upgrade wrongly is met with a growing backoff, as a server that refuses
    ///     is, rather than with a reconnection every `initialBackoff`.
    ///   - pingInterval: How often a ping checks that the connection is alive (`nil`: never); one
    ///     unanswered by the next ping ends the connection, which is then reconnected. It finds
    ///     half-open connections: a server that closes only its own side after the upgrade leaves
    ///     the client waiting on a dead connection forever otherwise. Measured on the real clock,
    ///     where swift-websocket's frame handling runs it.
    ///   - handshakeTimeout: The longest an attempt may wait for the server's answer to its
    ///     upgrade; one still unanswered then is given up and retried after the backoff.
    ///     The connection waits for that answer forever, even once the server has closed its
    ///     side (half-closed connections are kept open), which a server stopping mid-upgrade
    ///     does: without a deadline the source would never connect again, and its resource would
    ///     stay offline. An attempt given up is closed, its socket with it. Measured on the real
    ///     clock, as the ping is.
    ///   - firstHandshakeTimeout: A shorter deadline for the first attempt, and for the first
    ///     after any answer (a connection or a refusal); each attempt left unanswered doubles it,
    ///     up to `handshakeTimeout`. With a second here, a server restarted mid-upgrade costs its
    ///     clients about a second, and a slow one still gets the time it needs. `nil`, the
    ///     default: every attempt waits `handshakeTimeout`.
    ///   - clock: The clock the backoff sleeps on and `healthyAfter` is measured on.
    ///   - logger: Where the source logs what happens to its connections: warnings for what a
    ///     server should not do (an upgrade unanswered or answered wrongly, a close on an error,
    ///     a message over the limit).
    ///   - onConnectionChange: Told `true` on each connection, and `false` on each loss and on
    ///     each attempt that reaches no server (the connection refused or unreachable); usable as a
    ///     connectivity source.
    public init(
        url: String,
        headers: [String: String] = [:],
        initialBackoff: Duration = .milliseconds(250),
        maxBackoff: Duration = .seconds(10),
        healthyAfter: Duration = .seconds(5),
        pingInterval: Duration? = .seconds(30),
        handshakeTimeout: Duration = .seconds(10),
        firstHandshakeTimeout: Duration? = nil,
        clock: any Clock<Duration> = ContinuousClock(),
        logger: Logger = Logger(label: "StateLoopSync.WebSocketPush"),
        onConnectionChange: @escaping @Sendable (Bool) async -> Void = { _ in }
    ) {
        self.address = { url }
        self.headers = headers
        self.initialBackoff = initialBackoff
        self.maxBackoff = maxBackoff
        self.healthyAfter = healthyAfter
        self.pingInterval = pingInterval
        self.handshakeTimeout = handshakeTimeout
        self.firstHandshakeTimeout = min(firstHandshakeTimeout ?? handshakeTimeout, handshakeTimeout)
        self.clock = clock
        self.logger = logger
        self.onConnectionChange = onConnectionChange
    }

    /// Receives messages until the task is cancelled, reconnecting as needed.
    ///
    /// The backoff doubles after every attempt that did not give a healthy connection: one
    /// refused, unreachable, unanswered, with a broken handshake (a 101 with a wrong
    /// `Sec-WebSocket-Accept`, an answer that is not HTTP), or connected and ended before
    /// `healthyAfter` or by a protocol failure (an oversized message, a malformed frame). Only a
    /// connection that stayed up `healthyAfter` starts it again from `initialBackoff`: anything
    /// else a server can do costs it, and the client, at most one attempt per `maxBackoff`.
    /// Every attempt's socket is closed when the attempt ends, however it ends.
    public func run(receive: @escaping @Sendable (PushMessage<Value>) async -> Void) async {
        let transport = transport ?? NetworkTransport(pingInterval: pingInterval, logger: logger)
        var backoff = initialBackoff
        // Every connection but the one of the first attempt is a reconnection: whatever came
        // between (a lost connection, an attempt refused, unanswered or turned away after its
        // upgrade) may have hidden a change from this source.
        var attempts = 0
        var askedWhyRefused = false
        let firstDeadline = firstHandshakeTimeout
        var deadline = firstDeadline
        while !Task.isCancelled {
            attempts += 1
            let isReconnection = attempts > 1
            let stopwatch = OpeningStopwatch(on: clock)
            let outcome: PushAttempt
            let target = address()
            if let url = URL(string: target) {
                outcome = await transport.openPush(
                    TransportRequest(method: "GET", url: url, headers: headers), deadline: deadline, maximumMessageBytes: maximumMessageBytes,
                    opened: { [onConnectionChange, hintsOnReconnection] in
                        stopwatch.start()
                        await onConnectionChange(true)
                        if isReconnection && hintsOnReconnection {
                            await receive(.changed)
                        }
                    },
                    message: { text in
                        if let decoded = decode(text) {
                            await receive(decoded)
                        }
                    }
                )
            } else {
                logger.error("push address does not parse", metadata: ["url": "\(target)"])
                outcome = .unreachable
            }
            switch outcome {
            case .refused:
                deadline = firstDeadline
                // The server is there and said no: the resource pulls to find out why, once per
                // outage, and a 401 there signs it out, which stops this loop.
                if !askedWhyRefused {
                    askedWhyRefused = true
                    await receive(.failed(PushRefusedError()))
                }
            case .brokenHandshake:
                // The server answered, if not as a WebSocket server does: it answers promptly,
                // so the next attempt needs no longer deadline than the first.
                deadline = firstDeadline
            case .unreachable:
                // Said again at every such attempt, not once: a refusal meanwhile (a server
                // answering 503 as it stops) told the resource the network was up, and the
                // server then went away for good. The next refusal is news again: the resource,
                // offline now, pulls only when told (a server back without the session must
                // get its pull, and its 401).
                askedWhyRefused = false
                await onConnectionChange(false)
            case .unanswered:
                logger.warning("push upgrade unanswered within \(deadline): the attempt is given up and retried")
                deadline = min(deadline * 2, handshakeTimeout)
            case .ended(let failed):
                deadline = firstDeadline
                askedWhyRefused = false
                await onConnectionChange(false)
                if (stopwatch.elapsed ?? .zero) >= healthyAfter && !failed {
                    backoff = initialBackoff
                }
            }
            if Task.isCancelled { return }
            do {
                try await clock.sleep(for: backoff)
            } catch {
                return
            }
            backoff = min(backoff * 2, maxBackoff)
        }
    }

    /// The same source over `transport`.
    func over(_ transport: any SyncTransport) -> Self {
        var source = self
        source.transport = transport
        return source
    }

    /// The same source for a collection's socket: its address asked at every attempt, its
    /// messages read by `decode`, and no hint after a reconnection.
    func following(
        address: @escaping @Sendable () -> String, headers: [String: String], maximumMessageBytes: Int,
        decodeValue: @escaping @Sendable (Data) throws -> Versioned<Value>, onConnectionChange: @escaping @Sendable (Bool) async -> Void
    ) -> Self {
        var source = self
        source.headers.merge(headers) { _, new in new }
        source.onConnectionChange = onConnectionChange
        source.maximumMessageBytes = maximumMessageBytes
        source.address = address
        source.decodeValue = decodeValue
        source.hintsOnReconnection = false
        return source
    }

    /// One message as the resource sees it; `nil` for one that says nothing (`{"changed":
    /// false}`).
    func decode(_ message: Result<String, PushDecodingError>) -> PushMessage<Value>? {
        switch message {
        case .success(let text): decode(text)
        case .failure(let error): .failed(error)
        }
    }

    /// Decodes one text message: a value, a hint, or `.failed` with what is wrong with it.
    func decode(_ text: String) -> PushMessage<Value>? {
        let data = Data(text.utf8)
        let decoder = JSONDecoder()
        do {
            return .value(try decodeValue(data))
        } catch {
            if let hint = try? decoder.decode(ChangeHint.self, from: data) {
                return hint.changed ? .changed : nil
            }
            // Neither shape: the value's error says more than the hint's.
            return .failed(PushDecodingError(error, message: text))
        }
    }

}

extension ResourceSources where Value: Decodable {
    /// Sources from an HTTP pull and a WebSocket push.
    public init(pull: HTTPPull<Value>, push: WebSocketPush<Value>) {
        self.init(pull: { try await pull() })
        self.push = { receive in await push.run(receive: receive) }
    }
}

/// How long a connection has been up, on the push source's clock: started when the transport
/// says the socket opened, read once it ended.
private final class OpeningStopwatch: Sendable {
    private let readClock: @Sendable () -> Duration
    private let started = Mutex<Duration?>(nil)

    /// A stopwatch on `clock`, not started.
    init(on clock: any Clock<Duration>) {
        readClock = Self.reading(clock)
    }

    /// The time since a fixed instant of `clock` (generic, so that two of its instants can be
    /// subtracted).
    private static func reading<C: Clock<Duration>>(_ clock: C) -> @Sendable () -> Duration {
        let origin = clock.now
        return { origin.duration(to: clock.now) }
    }

    /// Starts counting now.
    func start() {
        let now = readClock()
        started.withLock { $0 = now }
    }

    /// The time since ``start()``; `nil` if it never started.
    var elapsed: Duration? {
        started.withLock { $0 }.map { readClock() - $0 }
    }
}
