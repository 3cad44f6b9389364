import Foundation
import HTTPTypes
import Logging
import StateLoopWire
import Synchronization
import WSClient

/// A push socket of a server under test, read as a test needs it: every text message received,
/// in order, and how the socket ended, polled with bounded waits so that a test fails rather
/// than hangs.
///
/// ```swift
/// let socket = TestPushSocket(port: port, path: "/me/notes/push", headers: ["Authorization": "Bearer \(token)"])
/// defer { socket.cancel() }
/// // … a mutation by another client …
/// #expect(socket.values(Notes.self).last?.value == expected)
/// let close = try await socket.closeFrame(within: .seconds(10))   // after a revocation
/// ```
///
/// It connects at once and never again: a test of reconnection uses the client's own push source.
/// Ownership: the socket is read by a task of its own, which ends with the socket or with
/// ``cancel()``.
public final class TestPushSocket: Sendable {
    /// How a socket ended.
    public enum Ending: Sendable, Equatable {
        /// The upgrade was refused, or the connection failed.
        case failed
        /// The connection ended, with a close frame or without.
        case closed
    }

    /// The socket's end went unseen within a test's bound.
    public struct StillOpen: Error, CustomStringConvertible {
        /// The bound.
        public let limit: Duration
        public var description: String { "the push socket was still open after \(limit)" }
    }

    private let state = SocketState()
    private let task: Task<WebSocketCloseFrame?, any Error>

    /// Connects to `url` (`ws://…`) with `headers`, and sends `send` once connected, if given.
    /// Frames over `maxFrameSize` bytes end the socket.
    public init(url: String, headers: [String: String] = [:], send: String? = nil, maxFrameSize: Int = 1 << 20) {
        var configuration = WebSocketClientConfiguration(maxFrameSize: maxFrameSize)
        for (name, value) in headers {
            if let field = HTTPField.Name(name) { configuration.additionalHeaders[field] = value }
        }
        var logger = Logger(label: "stateloop.test-push-socket")
        logger.logLevel = .critical
        let state = self.state
        task = Task {
            do {
                let frame = try await WebSocketClient.connect(url: url, configuration: configuration, logger: logger) { inbound, outbound, _ in
                    if let send { try await outbound.write(.text(send)) }
                    for try await message in inbound.messages(maxSize: maxFrameSize) {
                        if case .text(let text) = message { state.lock.withLock { $0.messages.append(text) } }
                    }
                }
                state.lock.withLock { $0.ending = .closed }
                return frame
            } catch {
                state.lock.withLock { $0.ending = .failed }
                throw error
            }
        }
    }

    /// Connects to `path` on the server listening on `port` on `127.0.0.1`.
    public convenience init(port: Int, path: String, headers: [String: String] = [:], send: String? = nil) {
        let path = path.hasPrefix("/") ? path : "/" + path
        self.init(url: "ws://127.0.0.1:\(port)\(path)", headers: headers, send: send)
    }

    /// The text messages received so far, in order.
    public var received: [String] {
        state.lock.withLock { $0.messages }
    }

    /// The messages received so far that decode as versioned values of `type`, in order.
    public func values<Value: Codable>(_ type: Value.Type = Value.self) -> [Versioned<Value>] {
        received.compactMap { try? JSONDecoder().decode(Versioned<Value>.self, from: Data($0.utf8)) }
    }

    /// How the socket ended, `nil` while it is open: poll it with a bounded wait, never await
    /// the end itself.
    public var ending: Ending? {
        state.lock.withLock { $0.ending }
    }

    /// Closes the socket from this side.
    public func cancel() {
        task.cancel()
    }

    /// How the server closed the socket (`nil`: not with a close frame).
    ///
    /// - Throws: The connection's error if it never opened (a refused upgrade), or ``StillOpen``
    ///   if it has not ended within `limit`, when it is closed from this side.
    public func closeFrame(within limit: Duration = .seconds(30)) async throws -> WebSocketCloseFrame? {
        let deadline = ContinuousClock.now + limit
        while ending == nil {
            guard ContinuousClock.now < deadline else {
                task.cancel()
                throw StillOpen(limit: limit)
            }
            try await Task.sleep(for: .milliseconds(10))
        }
        return try await task.value
    }
}

/// What a socket's reading task shares with the test: the messages and the ending.
private final class SocketState: Sendable {
    let lock = Mutex<(messages: [String], ending: TestPushSocket.Ending?)>(([], nil))
}
