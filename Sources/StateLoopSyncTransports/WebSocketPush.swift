import Foundation
import HTTPTypes
import Logging
import StateLoopSync
import WSClient

/// A push source over a WebSocket, with reconnection.
///
/// Each text message is JSON: a versioned value (`{"version": …, "value": …}`) or a bare hint
/// (`{"changed": true}`). When the connection drops, it reconnects after a backoff (doubling from
/// `initialBackoff` up to `maxBackoff`, reset by a successful connection), and every successful
/// reconnection is followed by a `.changed` hint, so the resource pulls once to catch up on
/// pushes it missed while disconnected.
///
/// Built on `WebSocketClient` from swift-websocket, which works on Linux (URLSession's WebSocket
/// task does not).
public struct WebSocketPush<Value: Decodable & Sendable>: Sendable {
    private let url: String
    private let headers: [String: String]
    private let initialBackoff: Duration
    private let maxBackoff: Duration
    private let clock: any Clock<Duration>
    private let logger: Logger
    private let onConnectionChange: @Sendable (Bool) async -> Void

    /// - Parameters:
    ///   - url: The `ws://` or `wss://` address.
    ///   - headers: Extra headers of the upgrade request (an `Authorization` bearer token, say).
    ///   - onConnectionChange: Told `true` on each connection and `false` on each loss; usable as
    ///     a connectivity source.
    public init(
        url: String,
        headers: [String: String] = [:],
        initialBackoff: Duration = .milliseconds(250),
        maxBackoff: Duration = .seconds(10),
        clock: any Clock<Duration> = ContinuousClock(),
        logger: Logger = Logger(label: "StateLoopSync.WebSocketPush"),
        onConnectionChange: @escaping @Sendable (Bool) async -> Void = { _ in }
    ) {
        self.url = url
        self.headers = headers
        self.initialBackoff = initialBackoff
        self.maxBackoff = maxBackoff
        self.clock = clock
        self.logger = logger
        self.onConnectionChange = onConnectionChange
    }

    /// Receives messages until the task is cancelled, reconnecting as needed.
    public func run(receive: @escaping @Sendable (PushMessage<Value>) async -> Void) async {
        var backoff = initialBackoff
        var connections = 0
        while !Task.isCancelled {
            var configuration = WebSocketClientConfiguration()
            configuration.additionalHeaders = headerFields
            let connected = Connected()
            let isReconnection = connections > 0
            do {
                try await WebSocketClient.connect(url: url, configuration: configuration, logger: logger) { inbound, _, _ in
                    connected.mark()
                    await onConnectionChange(true)
                    if isReconnection {
                        await receive(.changed)
                    }
                    for try await message in inbound.messages(maxSize: 1 << 20) {
                        guard case .text(let text) = message else { continue }
                        if let decoded = Self.decode(text) {
                            await receive(decoded)
                        }
                    }
                }
            } catch {
                logger.debug("push connection ended", metadata: ["error": "\(error)"])
            }
            if connected.value {
                connections += 1
                backoff = initialBackoff
                await onConnectionChange(false)
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

    /// Decodes one message; `nil` for a message that is neither shape (logged, skipped).
    static func decode(_ text: String) -> PushMessage<Value>? {
        let data = Data(text.utf8)
        if let payload = try? JSONDecoder().decode(VersionedPayload<Value>.self, from: data) {
            return .value(payload.versioned)
        }
        if let hint = try? JSONDecoder().decode(ChangedHint.self, from: data), hint.changed {
            return .changed
        }
        return nil
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

/// `{"changed": true}`: something changed, pull to see what.
struct ChangedHint: Decodable {
    let changed: Bool
}

/// Whether the handler of one connection attempt ran.
private final class Connected: @unchecked Sendable {
    private let lock = NSLock()
    private var connected = false

    func mark() {
        lock.lock()
        connected = true
        lock.unlock()
    }

    var value: Bool {
        lock.lock()
        defer { lock.unlock() }
        return connected
    }
}
