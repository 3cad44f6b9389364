import Foundation
import HTTPTypes
import Logging
import NIOCore
import NIOHTTP1
import NIOSSL
import NIOWebSocket
import StateLoopSync
import Synchronization
@_spi(WSInternal) import WSCore

#if canImport(FoundationNetworking)
    import FoundationNetworking
#endif

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
/// The upgrade is made on NIO directly (URLSession's WebSocket task does not work on Linux), so
/// that the source holds every socket it opens and closes it when its attempt ends: a refused or
/// broken upgrade, one given up at its deadline, a connection lost. swift-websocket's client
/// kept such sockets open with no way to reach them. The frames of an upgraded connection
/// (messages, pings, the close handshake) are swift-websocket's.
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
        let first = address()
        if PushTarget(first) == nil {
            logger.error("push address is not a ws:// or wss:// address with a host", metadata: ["url": "\(first)"])
        }
        let tls: NIOSSLContext?
        do {
            tls = try PushTarget(first)?.usesTLS == true ? NIOSSLContext(configuration: .makeClientConfiguration()) : nil
        } catch {
            logger.error("push TLS could not be set up", metadata: ["error": "\(error)"])
            tls = nil
        }
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
            let outcome = await connect(
                target: attempts == 1 ? PushTarget(first) : PushTarget(address()), tls: tls, isReconnection: attempts > 1, deadline: deadline,
                receive: receive
            )
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
            case .ended(let uptime, let failed):
                deadline = firstDeadline
                askedWhyRefused = false
                await onConnectionChange(false)
                if uptime >= healthyAfter && !failed {
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

    /// How one connection attempt went.
    enum Attempt: Equatable {
        /// Connected, then lost after `uptime` on the clock; `failed` when the connection ended
        /// on a protocol failure (a message over the limit, a malformed frame), not a close.
        case ended(uptime: Duration, failed: Bool)
        /// The server answered the upgrade request with something other than 101.
        case refused
        /// The server answered, but the handshake broke: a 101 with a wrong
        /// `Sec-WebSocket-Accept`, or an answer that is not HTTP.
        case brokenHandshake
        /// No connection (no server, a network error).
        case unreachable
        /// The upgrade was not answered within the attempt's deadline.
        case unanswered
    }

    /// Connects once and passes the messages on until the connection ends, or until the
    /// handshake deadline passes without an answer to the upgrade. The attempt's socket is
    /// closed before this returns, whatever the outcome: a hanging upgrade is ended by it.
    private func connect(
        target: PushTarget?, tls: NIOSSLContext?, isReconnection: Bool, deadline: Duration,
        receive: @escaping @Sendable (PushMessage<Value>) async -> Void
    ) async -> Attempt {
        let gate = HandshakeGate<Attempt>()
        let socket = PushSocket()
        // Unstructured: a hung attempt must not hold up its caller, as a child task would.
        let attempt = Task {
            gate.finish(
                await self.attempt(target: target, tls: tls, socket: socket, isReconnection: isReconnection, gate: gate, receive: receive)
            )
        }
        let watchdog = Task {
            if (try? await Task.sleep(for: deadline)) != nil {
                gate.giveUp(with: .unanswered)
            }
        }
        defer {
            watchdog.cancel()
            socket.close()
        }
        return await withTaskCancellationHandler {
            await gate.outcome()
        } onCancel: {
            attempt.cancel()
            socket.close()
            gate.giveUp(with: .unreachable)
        }
    }

    /// One connection attempt: its end, once the connection ends.
    private func attempt(
        target: PushTarget?, tls: NIOSSLContext?, socket: PushSocket, isReconnection: Bool, gate: HandshakeGate<Attempt>,
        receive: @escaping @Sendable (PushMessage<Value>) async -> Void
    ) async -> Attempt {
        guard let target else { return .unreachable }
        defer { socket.close() }
        let answer: PushUpgrade
        do {
            answer = try await target.upgrade(
                headers: headerFields, maximumFrameBytes: maximumMessageBytes, closeDeadline: .seconds(2), tls: tls, socket: socket
            )
        } catch {
            if Self.isBrokenHandshake(error) {
                logger.warning("push upgrade answered wrongly: the socket is closed and the attempt retried", metadata: ["error": "\(error)"])
                return .brokenHandshake
            }
            logEnd(error, connected: false)
            return .unreachable
        }
        guard case .upgraded(let channel) = answer else { return .refused }
        // Upgraded after its deadline: a later attempt has taken over (the socket is closed
        // on the way out).
        guard gate.upgraded() else { return .unreachable }
        let stopwatch = Stopwatch(on: clock)
        let configuration = WebSocketHandler.Configuration(
            extensions: [],
            autoPing: pingInterval.map { .enabled(timePeriod: $0) } ?? .disabled,
            // A server that does not answer the client's close holds the socket no longer (the
            // same deadline is the upgrade's `CloseDeadline`, for a close sent while the
            // handler still reads).
            closeTimeout: .seconds(2),
            validateUTF8: false,
            // The default frame limit (16 KiB) would end the connection for a message far under
            // the message limit, sent in one frame as servers do.
            maxFrameSize: maximumMessageBytes
        )
        do {
            let close = try await WebSocketHandler.handle(
                type: .client, configuration: configuration, asyncChannel: channel, context: PushSocketContext(logger: logger)
            ) { inbound, _, _ in
                await onConnectionChange(true)
                if isReconnection && hintsOnReconnection {
                    await receive(.changed)
                }
                for try await message in inbound.messages(maxSize: maximumMessageBytes) {
                    if let decoded = decode(message) {
                        await receive(decoded)
                    }
                }
            }
            logClose(close)
            return .ended(uptime: stopwatch.elapsed, failed: socket.endedOnProtocolFailure || Self.isProtocolFailure(close))
        } catch {
            logEnd(error, connected: true)
            return .ended(uptime: stopwatch.elapsed, failed: socket.endedOnProtocolFailure || !(error is CancellationError))
        }
    }

    /// Whether an upgrade failed on what the server answered, rather than on the network.
    private static func isBrokenHandshake(_ error: any Error) -> Bool {
        error is NIOHTTPClientUpgradeError || error is HTTPParserError || error is NIOSSLError
    }

    /// Whether a close says the connection broke a rule of the protocol (the server's, or the
    /// client's own answer to a frame over the limit), rather than that it ended.
    private static func isProtocolFailure(_ close: WebSocketCloseFrame?) -> Bool {
        switch close?.closeCode {
        case .messageTooLarge?, .protocolError?, .dataInconsistentWithMessage?, .unacceptableData?: true
        default: false
        }
    }

    /// Logs how a connection that ended without an error closed: quietly when the server closed
    /// it properly, loudly otherwise. A frame over the limit lands here: swift-websocket's frame
    /// decoder drops the connection without a close handshake and without an error.
    private func logClose(_ close: WebSocketCloseFrame?) {
        switch close?.closeCode {
        case .normalClosure?, .goingAway?:
            logger.debug("push connection closed by the server")
        case .messageTooLarge?:
            logMessageTooLarge()
        case let code?:
            logger.warning("push connection closed on an error", metadata: ["code": "\(code)", "reason": "\(close?.reason ?? "")"])
        case nil:
            logger.warning(
                "push connection lost without a close from the server: a frame over the limit, or a dropped connection",
                metadata: ["limit": "\(maximumMessageBytes) bytes"]
            )
        }
    }

    /// Logs why a connection ended or could not start: loudly for what a server should not do,
    /// quietly for a server that is not there (retried every backoff).
    private func logEnd(_ error: any Error, connected: Bool) {
        // swift-websocket's frame handling ends a message over the limit with an error of its
        // own (package-only): known by its description, for the log alone.
        if "\(error)".contains("messageTooLarge") {
            logMessageTooLarge()
        } else if error is CancellationError || Task.isCancelled {
            logger.debug("push connection cancelled")
        } else if connected {
            logger.warning("push connection ended by an error", metadata: ["error": "\(error)"])
        } else {
            logger.debug("push connection failed", metadata: ["error": "\(error)"])
        }
    }

    private func logMessageTooLarge() {
        logger.warning(
            "push connection closed: the server sent a message over the limit; a pull fetches the value",
            metadata: ["limit": "\(maximumMessageBytes) bytes"]
        )
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
    func decode(_ message: WebSocketMessage) -> PushMessage<Value>? {
        switch message {
        case .text(let text):
            decode(text)
        case .binary:
            .failed(PushDecodingError(problem: "a binary message, where JSON text was expected", message: ""))
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

    private var headerFields: HTTPFields {
        var fields = HTTPFields()
        for (name, value) in headers {
            if let field = HTTPField.Name(name) {
                fields[field] = value
            }
        }
        return fields
    }
}

extension ResourceSources where Value: Decodable {
    /// Sources from an HTTP pull and a WebSocket push.
    public init(pull: HTTPPull<Value>, push: WebSocketPush<Value>) {
        self.init(pull: { try await pull() })
        self.push = { receive in await push.run(receive: receive) }
    }
}

/// How long a connection has been up, on the push source's clock.
private struct Stopwatch: Sendable {
    private let elapsedSinceStart: @Sendable () -> Duration

    /// Starts counting now on `clock`.
    init(on clock: any Clock<Duration>) {
        elapsedSinceStart = Self.elapsed(on: clock)
    }

    /// The time since now on `clock`, measured when called (generic, so that two of its
    /// instants can be subtracted).
    private static func elapsed<C: Clock<Duration>>(on clock: C) -> @Sendable () -> Duration {
        let start = clock.now
        return { start.duration(to: clock.now) }
    }

    /// The time since the stopwatch was made.
    var elapsed: Duration {
        elapsedSinceStart()
    }
}
