import Foundation
import Logging
import NIOWebSocket
import StateLoopWire
import Synchronization
import WSClient

/// A push socket of the test server read with swift-websocket's client: every text message it
/// receives, and how it was closed.
final class PushReader: Sendable {
    private let messages = MessageLog()
    private let task: Task<WebSocketCloseFrame?, any Error>
    private let outcome = EndingBox()

    /// How a socket ended, once it has.
    enum Ending: Sendable, Equatable {
        /// The upgrade was refused, or the connection failed.
        case failed
        /// The connection ended, with a close frame or without.
        case closed
    }

    /// Connects to `path` as `user` (no token when `nil`), or with `token` when given, with an
    /// optional client id; sends `send` once connected, if given.
    init(port: Int, path: String, as user: String?, token: String? = nil, clientID: String? = nil, send: String? = nil) {
        var configuration = WebSocketClientConfiguration(maxFrameSize: 1 << 20)
        if let bearer = token ?? user.map({ "t-\($0)" }) { configuration.additionalHeaders[.authorization] = "Bearer \(bearer)" }
        let query = clientID.map { "?clientID=\($0)" } ?? ""
        var logger = Logger(label: "push-reader")
        logger.logLevel = .critical
        let messages = self.messages
        let outcome = self.outcome
        task = Task {
            do {
                let frame = try await WebSocketClient.connect(
                    url: "ws://127.0.0.1:\(port)/\(path)\(query)", configuration: configuration, logger: logger
                ) { inbound, outbound, _ in
                    if let send { try await outbound.write(.text(send)) }
                    for try await message in inbound.messages(maxSize: 1 << 20) {
                        if case .text(let text) = message { messages.append(text) }
                    }
                }
                outcome.set(.closed)
                return frame
            } catch {
                outcome.set(.failed)
                throw error
            }
        }
    }

    var received: [String] { messages.all }

    /// The received values, decoded.
    func values<Value: Codable>(_ type: Value.Type = Value.self) -> [Versioned<Value>] {
        received.compactMap { try? JSONDecoder().decode(Versioned<Value>.self, from: Data($0.utf8)) }
    }

    /// How the socket ended, `nil` while it is open: poll it with a bounded wait
    /// (`eventually(within:)`), never await the end itself.
    var ending: Ending? {
        outcome.value
    }

    /// Closes the socket from this side.
    func cancel() {
        task.cancel()
    }

    /// How the server closed the socket (`nil`: not by a close frame); throws if the connection
    /// never opened (a refused upgrade), or if it has not ended within `limit` (the socket is
    /// then closed from this side: a test fails, it never hangs).
    func closeFrame(within limit: Duration = .seconds(10)) async throws -> WebSocketCloseFrame? {
        let deadline = ContinuousClock.now + limit
        while outcome.value == nil {
            guard ContinuousClock.now < deadline else {
                task.cancel()
                throw StillOpen(limit: limit)
            }
            try await Task.sleep(for: .milliseconds(10))
        }
        return try await task.value
    }

    struct StillOpen: Error, CustomStringConvertible {
        let limit: Duration
        var description: String { "the push socket was still open after \(limit)" }
    }
}

/// Messages received, shared between the reading task and the test.
final class MessageLog: Sendable {
    private let messages = Mutex<[String]>([])

    func append(_ message: String) {
        messages.withLock { $0.append(message) }
    }

    var all: [String] { messages.withLock { $0 } }
}

/// How a push reader's socket ended, shared between its task and the test.
private final class EndingBox: Sendable {
    private let ending = Mutex<PushReader.Ending?>(nil)

    func set(_ value: PushReader.Ending) {
        ending.withLock { $0 = value }
    }

    var value: PushReader.Ending? { ending.withLock { $0 } }
}
