import Foundation
import Hummingbird
import HummingbirdWebSocket
import Logging
import StateLoopServer
import Synchronization
import TestSupport
import Testing

/// Runs `router` (and `sockets`, when given, for WebSocket upgrades) on a free loopback port (or
/// `fixedPort`) for the duration of `body`, which gets the port, then stops it: a host's stop,
/// graceful first, which is what NIO needs (cancelling a server while a connection is being
/// accepted traps, apple/swift-nio#3481, and CI hit exactly that); a socket the test left open
/// is cut once the stop's bound passed.
func withLoopback(
    _ router: Router<BasicRequestContext>,
    sockets: Router<BasicWebSocketRequestContext>? = nil,
    webSocket: WebSocketServerConfiguration = .init(),
    port fixedPort: Int = 0,
    _ body: (Int) async throws -> Void
) async throws {
    var logger = Logger(label: "loopback")
    logger.logLevel = .critical
    let application = Application(
        router: router,
        server: sockets.map { .http1WebSocketUpgrade(webSocketRouter: $0, configuration: .init(ws: webSocket)) } ?? .http1(),
        configuration: .init(address: .hostname("127.0.0.1", port: fixedPort)),
        logger: logger
    )
    // Started once, on the port the application names.
    let host = SyncHost(port: fixedPort, logger: logger) { _ in .init(application) }
    let port = try await host.start()
    var failure: (any Error)?
    do {
        try await body(port)
    } catch {
        failure = error
    }
    await host.stop()
    if let failure { throw failure }
}

/// The wait for `operation` gave up.
struct WaitTimedOut: Error, CustomStringConvertible {
    let seconds: Int
    var description: String { "no result within \(seconds) s" }
}

/// `operation`'s result, or `WaitTimedOut` after `seconds` times ``hangGuardScale`` (real time:
/// the wait on a loopback server only ever needs a fraction of it, the bound is there so that a
/// bug fails the test rather than hanging it; a machine at load 8 took more than 10 s).
func bounded<T: Sendable>(seconds: Int = 30, _ operation: @escaping @Sendable () async throws -> T) async throws -> T {
    let limit = seconds * hangGuardScale
    return try await withThrowingTaskGroup(of: T?.self) { group in
        group.addTask { try await operation() }
        group.addTask {
            try await Task.sleep(for: .seconds(limit))
            return nil
        }
        defer { group.cancelAll() }
        guard let result = try await group.next(), let value = result else { throw WaitTimedOut(seconds: limit) }
        return value
    }
}

/// Values put from anywhere, taken in order by one waiting test.
final class Inbox<Element: Sendable>: Sendable {
    private let stream: AsyncStream<Element>
    private let continuation: AsyncStream<Element>.Continuation
    private let all = Mutex<[Element]>([])

    init() {
        (stream, continuation) = AsyncStream.makeStream(of: Element.self)
    }

    func put(_ element: Element) {
        all.withLock { $0.append(element) }
        continuation.yield(element)
    }

    /// Every element put so far.
    var elements: [Element] {
        all.withLock { $0 }
    }

    /// Waits (bounded) until `count` elements have been put in all, and returns them. The
    /// bound is a hang guard, generous for a loaded machine (10 s was missed beside two CPU hogs
    /// and a build).
    func waitFor(_ count: Int, seconds: Int = 30) async throws -> [Element] {
        let stream = stream
        return try await bounded(seconds: seconds) {
            var seen = self.elements.count
            var iterator = stream.makeAsyncIterator()
            while seen < count, await iterator.next() != nil {
                seen = self.elements.count
            }
            return self.elements
        }
    }
}

/// Log messages at `warning` and above, kept for a test to read.
struct CapturingLogHandler: LogHandler {
    let messages: Inbox<String>
    var metadata: Logger.Metadata = [:]
    var logLevel: Logger.Level = .warning

    subscript(metadataKey key: String) -> Logger.Metadata.Value? {
        get { metadata[key] }
        set { metadata[key] = newValue }
    }

    func log(event: LogEvent) {
        messages.put("\(event.level): \(event.message)")
    }
}

/// A value shared by a server's handlers and the test (a `Mutex` in a class, so that escaping
/// handlers can capture it).
final class Shared<Value: Sendable>: Sendable {
    private let mutex: Mutex<Value>

    init(_ value: Value) {
        mutex = Mutex(value)
    }

    var value: Value {
        get { mutex.withLock { $0 } }
        set { mutex.withLock { $0 = newValue } }
    }

    func update(_ change: (inout Value) -> Void) {
        mutex.withLock { change(&$0) }
    }
}
