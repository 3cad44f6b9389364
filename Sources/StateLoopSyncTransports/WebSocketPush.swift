import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
import HTTPTypes
import Logging
import StateLoopSync
import Synchronization
import WSClient

/// A push source over a WebSocket, with reconnection.
///
/// Each text message is JSON: a versioned value (`{"version": …, "value": …}`) or a bare hint
/// (`{"changed": true}`); any other message is reported as ``PushMessage/failed(_:)`` with a
/// ``PushDecodingError``, and the resource pulls instead. When the connection drops, it
/// reconnects after a backoff (doubling from `initialBackoff` up to `maxBackoff`), and every
/// connection but that of the first attempt is followed by a `.changed` hint, so the resource
/// pulls once to catch up on pushes it missed meanwhile. A refused upgrade is reported once per
/// outage as `.failed(PushRefusedError())`: the resource pulls to learn why, and a 401 there
/// makes it unauthorized, which cancels this source until the app signs in again.
///
/// Built on `WebSocketClient` from swift-websocket, which works on Linux (URLSession's WebSocket
/// task does not).
public struct WebSocketPush<Value: Decodable & Sendable>: Sendable {
    /// The largest message accepted, in bytes, whole or in frames; a larger one ends the
    /// connection (and is logged), and the reconnection's pull fetches the value instead.
    static var maximumMessageBytes: Int { 1 << 20 }

    private let url: String
    private let headers: [String: String]
    private let initialBackoff: Duration
    private let maxBackoff: Duration
    private let healthyAfter: Duration
    private let pingInterval: Duration?
    private let handshakeTimeout: Duration
    private let firstHandshakeTimeout: Duration
    private let clock: any Clock<Duration>
    private let logger: Logger
    private let onConnectionChange: @Sendable (Bool) async -> Void

    /// - Parameters:
    ///   - url: The `ws://` or `wss://` address.
    ///   - headers: Extra headers of the upgrade request (an `Authorization` bearer token, say).
    ///   - healthyAfter: How long a connection must last, on `clock`, for the backoff to start
    ///     again from `initialBackoff` once it ends. A server that accepts and closes at once (or
    ///     sends a message over the limit, which closes the connection) is met with a growing
    ///     backoff, as a server that refuses is, rather than with a reconnection every
    ///     `initialBackoff`.
    ///   - pingInterval: How often a ping checks that the connection is alive (`nil`: never); one
    ///     unanswered by the next ping ends the connection, which is then reconnected. It finds
    ///     half-open connections, and connections swift-websocket has lost track of: a server that
    ///     closes right after the upgrade sometimes leaves the client waiting on a dead connection
    ///     forever otherwise. Measured on the real clock, where swift-websocket runs it.
    ///   - handshakeTimeout: The longest an attempt may wait for the server's answer to its
    ///     upgrade; one still unanswered then is given up and retried after the backoff.
    ///     swift-websocket waits for that answer forever, even once the server has closed its
    ///     side (it keeps half-closed connections open), which a server stopping mid-upgrade
    ///     does: without a deadline the source would never connect again, and its resource would
    ///     stay offline. An attempt given up keeps its socket, which swift-websocket gives no way
    ///     to close before the upgrade: one per stalled upgrade, until the process ends or the
    ///     connection is reset. Measured on the real clock, as the ping is.
    ///   - firstHandshakeTimeout: A shorter deadline for the first attempt, and for the first
    ///     after any answer (a connection or a refusal); each attempt left unanswered doubles it,
    ///     up to `handshakeTimeout`. With a second here, a server restarted mid-upgrade costs its
    ///     clients about a second, and a slow one still gets the time it needs. `nil`, the
    ///     default: every attempt waits `handshakeTimeout`.
    ///   - onConnectionChange: Told `true` on each connection and `false` on each loss; usable as
    ///     a connectivity source.
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
        self.url = url
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
    public func run(receive: @escaping @Sendable (PushMessage<Value>) async -> Void) async {
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
            switch await connect(isReconnection: attempts > 1, deadline: deadline, receive: receive) {
            case .refused:
                deadline = firstDeadline
                // swift-websocket does not say the refusal's status, and asking again over
                // URLSession is no answer (an accepted upgrade would hang that request). The
                // server is there: the resource pulls to find out why, once per outage, and a 401
                // there signs it out, which stops this loop.
                if !askedWhyRefused {
                    askedWhyRefused = true
                    await receive(.failed(PushRefusedError()))
                }
            case .unreachable:
                break
            case .unanswered:
                logger.warning("push upgrade unanswered within \(deadline): the attempt is given up and retried")
                deadline = min(deadline * 2, handshakeTimeout)
            case .ended(let uptime):
                deadline = firstDeadline
                askedWhyRefused = false
                await onConnectionChange(false)
                if uptime >= healthyAfter {
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
    private enum Attempt {
        /// Connected, then lost after `uptime` on the clock.
        case ended(uptime: Duration)
        /// The server answered the upgrade request with something other than 101.
        case refused
        /// No connection (no server, a network error, a broken handshake).
        case unreachable
        /// The upgrade was not answered within the attempt's deadline.
        case unanswered
    }

    /// Connects once and passes the messages on until the connection ends, or until the
    /// handshake deadline passes without an answer to the upgrade.
    private func connect(
        isReconnection: Bool, deadline: Duration, receive: @escaping @Sendable (PushMessage<Value>) async -> Void
    ) async -> Attempt {
        let gate = HandshakeGate<Attempt>()
        // Unstructured: a hung attempt must not hold up its caller, as a child task would.
        let attempt = Task {
            gate.finish(await self.attempt(isReconnection: isReconnection, gate: gate, receive: receive))
        }
        let watchdog = Task {
            if (try? await Task.sleep(for: deadline)) != nil {
                gate.giveUp(with: .unanswered)
            }
        }
        defer { watchdog.cancel() }
        return await withTaskCancellationHandler {
            await gate.outcome()
        } onCancel: {
            attempt.cancel()
            gate.giveUp(with: .unreachable)
        }
    }

    /// One connection attempt, as swift-websocket makes it: its end, once the connection ends.
    private func attempt(
        isReconnection: Bool, gate: HandshakeGate<Attempt>, receive: @escaping @Sendable (PushMessage<Value>) async -> Void
    ) async -> Attempt {
        var configuration = WebSocketClientConfiguration()
        configuration.additionalHeaders = headerFields
        // The default frame limit (16 KiB) would end the connection for a message far under the
        // message limit, sent in one frame as servers do.
        configuration.maxFrameSize = Self.maximumMessageBytes
        configuration.autoPing = pingInterval.map { .enabled(timePeriod: $0) } ?? .disabled
        let stopwatch = Stopwatch()
        do {
            let close = try await WebSocketClient.connect(url: url, configuration: configuration, logger: logger) { inbound, _, _ in
                // Upgraded after its deadline: a later attempt has taken over.
                guard gate.upgraded() else { return }
                stopwatch.start(on: clock)
                await onConnectionChange(true)
                if isReconnection {
                    await receive(.changed)
                }
                for try await message in inbound.messages(maxSize: Self.maximumMessageBytes) {
                    if let decoded = Self.decode(message) {
                        await receive(decoded)
                    }
                }
            }
            logClose(close)
        } catch let error as WebSocketClientError where error == .webSocketUpgradeFailed {
            return .refused
        } catch {
            logEnd(error, connected: stopwatch.elapsed != nil)
        }
        return stopwatch.elapsed.map { .ended(uptime: $0) } ?? .unreachable
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
                metadata: ["limit": "\(Self.maximumMessageBytes) bytes"]
            )
        }
    }

    /// Logs why a connection ended or could not start: loudly for what a server should not do,
    /// quietly for a server that is not there (retried every backoff).
    private func logEnd(_ error: any Error, connected: Bool) {
        if let error = error as? WebSocketClientError, error == .serverSentMessageTooLarge {
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
            metadata: ["limit": "\(Self.maximumMessageBytes) bytes"]
        )
    }

    /// One message as the resource sees it; `nil` for one that says nothing (`{"changed":
    /// false}`).
    static func decode(_ message: WebSocketMessage) -> PushMessage<Value>? {
        switch message {
        case .text(let text):
            decode(text)
        case .binary:
            .failed(PushDecodingError(problem: "a binary message, where JSON text was expected", message: ""))
        }
    }

    /// Decodes one text message: a value, a hint, or `.failed` with what is wrong with it.
    static func decode(_ text: String) -> PushMessage<Value>? {
        let data = Data(text.utf8)
        let decoder = JSONDecoder()
        do {
            return .value(try decoder.decode(VersionedPayload<Value>.self, from: data).versioned)
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

/// When the handler of one connection attempt started, on the push source's clock: whether it
/// connected at all, and for how long.
private final class Stopwatch: Sendable {
    private let elapsedSinceStart = Mutex<(@Sendable () -> Duration)?>(nil)

    /// Starts counting now on `clock`.
    func start(on clock: any Clock<Duration>) {
        let elapsed = Self.elapsed(on: clock)
        elapsedSinceStart.withLock { $0 = elapsed }
    }

    /// The time since now on `clock`, measured when called (generic, so that two of its
    /// instants can be subtracted).
    private static func elapsed<C: Clock<Duration>>(on clock: C) -> @Sendable () -> Duration {
        let start = clock.now
        return { start.duration(to: clock.now) }
    }

    /// The time since ``start(on:)``; `nil` if it was never called.
    var elapsed: Duration? {
        elapsedSinceStart.withLock { $0 }?()
    }
}
