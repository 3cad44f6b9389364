import AsyncHTTPClient
import Foundation
import HTTPTypes
import Logging
import NIOCore
import NIOHTTP1
import NIOSSL
import NIOWebSocket
import StateLoopSync
@_spi(WSInternal) import WSCore

#if canImport(FoundationNetworking)
    import FoundationNetworking
#endif

/// The network, as a ``SyncTransport``: requests with AsyncHTTPClient, push sockets upgraded on
/// SwiftNIO with swift-websocket's frames. What a ``SyncEndpoint`` uses unless given another.
///
/// Built on AsyncHTTPClient rather than URLSession: on Linux, FoundationNetworking's URLSession
/// deadlocks when a waiting call is cancelled (swift-corelibs-foundation issue 5412) and crashes
/// around refused and closed connections (issues 4791, 5469), which a client meets every time
/// its server restarts; every StateLoop request can be cancelled, and AsyncHTTPClient's
/// cancellation is safe. A request that failed before a byte of it was written (a pooled
/// connection the server had closed) is sent once more. The body of an answer outside 200–299
/// is not read.
///
/// The upgrade is made on NIO directly (URLSession's WebSocket task does not work on Linux), so
/// that the transport holds every socket it opens and closes it when its attempt ends: a refused
/// or broken upgrade, one given up at its deadline, a connection lost. swift-websocket's client
/// kept such sockets open with no way to reach them.
public struct NetworkTransport: SyncTransport {
    /// The HTTP client to send with; `nil` shares one client for the process.
    public var client: HTTPClient?
    /// How often a ping checks that a push socket is alive (`nil`: never); one unanswered by the
    /// next ping ends the socket. It finds half-open connections: a server that closes only its
    /// own side leaves the client waiting on a dead socket forever otherwise.
    public var pingInterval: Duration?
    /// Where the push sockets log what a server should not do (an upgrade answered wrongly, a
    /// close on an error, a message over the limit).
    public var logger: Logger

    /// The network, with `client` (or the process's shared one).
    public init(client: HTTPClient? = nil, pingInterval: Duration? = .seconds(30), logger: Logger = Logger(label: "StateLoopSync.push")) {
        self.client = client
        self.pingInterval = pingInterval
        self.logger = logger
    }

    // MARK: Requests

    public func send(_ request: TransportRequest, limit: Int) async throws -> TransportResponse {
        let outgoing = HTTPExchange.request(HTTPMethod(rawValue: request.method), request.url, headers: request.headers, body: request.body)
        let response = try await HTTPExchange.retryingUnsent {
            try await (client ?? HTTPExchange.sharedClient).execute(outgoing, timeout: HTTPExchange.deadline)
        }
        var headers: [String: String] = [:]
        for header in response.headers { headers[header.name.lowercased()] = header.value }
        let status = Int(response.status.code)
        guard (200...299).contains(status) else {
            // The status is the answer: its body is not read (it may be of any size), and is
            // dropped with its connection.
            return TransportResponse(status: status, headers: headers)
        }
        let declared = response.headers.first(name: "Content-Length").flatMap { Int($0) }
        if let declared, declared > limit {
            throw ResponseTooLargeError(limit: limit, declaredLength: declared)
        }
        do {
            // Collected as it arrives: an endless body ends at the limit, when the body is dropped
            // and with it the connection.
            return TransportResponse(status: status, headers: headers, body: try await HTTPExchange.collect(response, upTo: limit))
        } catch is NIOTooManyBytesError {
            throw ResponseTooLargeError(limit: limit, declaredLength: declared)
        }
    }

    // MARK: Push sockets

    /// The TLS context of every `wss://` socket: one for the process, since making one loads the
    /// system's trust roots.
    private static let tls: Result<NIOSSLContext, any Error> = Result { try NIOSSLContext(configuration: .makeClientConfiguration()) }

    /// Connects once and passes the messages on until the connection ends, or until `deadline`
    /// passes without an answer to the upgrade. The attempt's socket is closed before this
    /// returns, whatever the outcome: a hanging upgrade is ended by it.
    public func openPush(
        _ request: TransportRequest, deadline: Duration, maximumMessageBytes: Int, opened: @escaping @Sendable () async -> Void,
        message: @escaping @Sendable (Result<String, PushDecodingError>) async -> Void
    ) async -> PushAttempt {
        guard let target = PushTarget(request.url.absoluteString) else {
            logger.error("push address is not a ws:// or wss:// address with a host", metadata: ["url": "\(request.url)"])
            return .unreachable
        }
        let tls: NIOSSLContext?
        switch target.usesTLS ? Self.tls : nil {
        case .success(let context)?:
            tls = context
        case .failure(let error)?:
            logger.error("push TLS could not be set up", metadata: ["error": "\(error)"])
            return .unreachable
        case nil:
            tls = nil
        }
        let gate = HandshakeGate<PushAttempt>()
        let socket = PushSocket()
        let headers = HTTPFields(request.headers)
        // Unstructured: a hung attempt must not hold up its caller, as a child task would.
        let attempt = Task {
            gate.finish(
                await self.attempt(
                    target: target, headers: headers, tls: tls, socket: socket, gate: gate, maximumMessageBytes: maximumMessageBytes,
                    opened: opened, message: message)
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
        target: PushTarget, headers: HTTPFields, tls: NIOSSLContext?, socket: PushSocket, gate: HandshakeGate<PushAttempt>,
        maximumMessageBytes: Int, opened: @escaping @Sendable () async -> Void,
        message: @escaping @Sendable (Result<String, PushDecodingError>) async -> Void
    ) async -> PushAttempt {
        defer { socket.close() }
        let answer: PushUpgrade
        do {
            answer = try await target.upgrade(
                headers: headers, maximumFrameBytes: maximumMessageBytes, closeDeadline: .seconds(2), tls: tls, socket: socket
            )
        } catch {
            if Self.isBrokenHandshake(error) {
                logger.warning("push upgrade answered wrongly: the socket is closed and the attempt retried", metadata: ["error": "\(error)"])
                return .brokenHandshake
            }
            logEnd(error, connected: false, limit: maximumMessageBytes)
            return .unreachable
        }
        guard case .upgraded(let channel) = answer else { return .refused }
        // Upgraded after its deadline: a later attempt has taken over (the socket is closed
        // on the way out).
        guard gate.upgraded() else { return .unreachable }
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
                await opened()
                for try await received in inbound.messages(maxSize: maximumMessageBytes) {
                    switch received {
                    case .text(let text):
                        await message(.success(text))
                    case .binary:
                        await message(.failure(PushDecodingError(problem: "a binary message, where JSON text was expected", message: "")))
                    }
                }
            }
            logClose(close, limit: maximumMessageBytes)
            return .ended(failed: socket.endedOnProtocolFailure || Self.isProtocolFailure(close))
        } catch {
            logEnd(error, connected: true, limit: maximumMessageBytes)
            return .ended(failed: socket.endedOnProtocolFailure || !(error is CancellationError))
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
    private func logClose(_ close: WebSocketCloseFrame?, limit: Int) {
        switch close?.closeCode {
        case .normalClosure?, .goingAway?:
            logger.debug("push connection closed by the server")
        case .messageTooLarge?:
            logMessageTooLarge(limit: limit)
        case let code?:
            logger.warning("push connection closed on an error", metadata: ["code": "\(code)", "reason": "\(close?.reason ?? "")"])
        case nil:
            logger.warning(
                "push connection lost without a close from the server: a frame over the limit, or a dropped connection",
                metadata: ["limit": "\(limit) bytes"]
            )
        }
    }

    /// Logs why a connection ended or could not start: loudly for what a server should not do,
    /// quietly for a server that is not there (retried every backoff).
    private func logEnd(_ error: any Error, connected: Bool, limit: Int) {
        // swift-websocket's frame handling ends a message over the limit with an error of its
        // own (package-only): known by its description, for the log alone.
        if "\(error)".contains("messageTooLarge") {
            logMessageTooLarge(limit: limit)
        } else if error is CancellationError || Task.isCancelled {
            logger.debug("push connection cancelled")
        } else if connected {
            logger.warning("push connection ended by an error", metadata: ["error": "\(error)"])
        } else {
            logger.debug("push connection failed", metadata: ["error": "\(error)"])
        }
    }

    private func logMessageTooLarge(limit: Int) {
        logger.warning(
            "push connection closed: the server sent a message over the limit; a pull fetches the value",
            metadata: ["limit": "\(limit) bytes"]
        )
    }
}
