import Foundation
import Logging
import StateLoopInspectorWire
import Synchronization
import WSClient

/// Debian's `chromium`, headless, driven over the DevTools protocol: load a page, evaluate
/// JavaScript in it, take a screenshot. Every call is bounded by `timeout`; the browser and
/// its profile folder are removed by ``close()``.
public final class HeadlessChromium: Sendable {
    /// Why the browser cannot be used here, with how to fix it; `nil` when it can.
    public static var missing: String? {
        binary == nil
            ? "Chromium is not installed (no chromium on the PATH or at /usr/bin/chromium): apt-get install chromium, or set STATELOOP_CHROMIUM" : nil
    }

    private static var binary: String? {
        let candidates = [ProcessInfo.processInfo.environment["STATELOOP_CHROMIUM"], "/usr/bin/chromium", "/usr/bin/chromium-browser"]
        return candidates.compactMap { $0 }.first { FileManager.default.isExecutableFile(atPath: $0) }
    }

    private let process: Process
    private let profile: URL
    private let session: DevToolsSession
    private let timeout: Duration

    private init(process: Process, profile: URL, session: DevToolsSession, timeout: Duration) {
        self.process = process
        self.profile = profile
        self.session = session
        self.timeout = timeout
    }

    /// Starts a browser with an empty profile and attaches to its page.
    public static func launch(windowWidth: Int = 1400, windowHeight: Int = 900, timeout: Duration = .seconds(20)) async throws -> HeadlessChromium {
        guard let binary else { throw Failure(description: missing ?? "no chromium") }
        let profile = FileManager.default.temporaryDirectory.appendingPathComponent("stateloop-chromium-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: profile, withIntermediateDirectories: true)
        let process = Process()
        process.executableURL = URL(fileURLWithPath: binary)
        process.arguments = [
            "--headless", "--no-sandbox", "--disable-gpu", "--no-first-run", "--disable-extensions", "--disable-background-networking",
            "--remote-debugging-address=127.0.0.1", "--remote-debugging-port=0", "--remote-allow-origins=*", "--user-data-dir=\(profile.path)",
            "--window-size=\(windowWidth),\(windowHeight)", "about:blank",
        ]
        process.standardOutput = FileHandle.nullDevice
        process.standardError = FileHandle.nullDevice
        try process.run()
        do {
            let page = try await pageSocket(in: profile, within: timeout)
            let session = DevToolsSession(url: page)
            return HeadlessChromium(process: process, profile: profile, session: session, timeout: timeout)
        } catch {
            process.terminate()
            process.waitUntilExit()
            try? FileManager.default.removeItem(at: profile)
            throw error
        }
    }

    /// Runs `body` with a browser launched for it, and closes the browser after it, whether
    /// `body` returns or throws.
    public static func using<Result>(
        isolation: isolated (any Actor)? = #isolation, _ body: (HeadlessChromium) async throws -> Result
    ) async throws -> Result {
        let browser = try await launch()
        do {
            let result = try await body(browser)
            await browser.close()
            return result
        } catch {
            await browser.close()
            throw error
        }
    }

    /// Loads `url` and returns once its `load` event has fired.
    public func navigate(to url: String) async throws {
        _ = try await session.call("Page.enable", timeout: timeout)
        _ = try await session.call("Page.navigate", ["url": .string(url)], timeout: timeout)
        let deadline = ContinuousClock.now + timeout
        while ContinuousClock.now < deadline {
            if case .string("complete") = try await evaluate("document.readyState") { return }
            try await Task.sleep(for: .milliseconds(50))
        }
        throw Failure(description: "\(url) did not finish loading within \(timeout)")
    }

    /// The value of a JavaScript expression (promises awaited), as JSON.
    public func evaluate(_ expression: String) async throws -> JSONValue {
        let result = try await session.call(
            "Runtime.evaluate", ["expression": .string(expression), "returnByValue": .bool(true), "awaitPromise": .bool(true)], timeout: timeout
        )
        guard case .object(let fields) = result else { return .null }
        if case .object(let exception)? = fields["exceptionDetails"] {
            throw Failure(
                description: "\(expression) threw: \(exception["text"].map { "\($0)" } ?? "?") \(exception["exception"].map { "\($0)" } ?? "")")
        }
        guard case .object(let remote)? = fields["result"] else { return .null }
        return remote["value"] ?? .null
    }

    /// Polls `expression` until it is `true`, for at most `limit`; `false` if it never was.
    public func waitFor(_ expression: String, within limit: Duration = .seconds(30)) async throws -> Bool {
        let deadline = ContinuousClock.now + limit
        while ContinuousClock.now < deadline {
            if try await evaluate(expression) == .bool(true) { return true }
            try await Task.sleep(for: .milliseconds(50))
        }
        return try await evaluate(expression) == .bool(true)
    }

    /// A PNG of the page as it is drawn now.
    public func screenshot() async throws -> Data {
        let result = try await session.call("Page.captureScreenshot", ["format": .string("png")], timeout: timeout)
        guard case .object(let fields) = result, case .string(let base64)? = fields["data"], let data = Data(base64Encoded: base64) else {
            throw Failure(description: "no screenshot in \(result)")
        }
        return data
    }

    /// Ends the browser and removes its profile.
    public func close() async {
        session.close()
        process.terminate()
        process.waitUntilExit()
        try? FileManager.default.removeItem(at: profile)
    }

    /// The browser's DevTools address, which Chromium writes into its profile once it listens:
    /// the port, then the browser socket's path.
    private static func browserSocket(in profile: URL, within limit: Duration) async throws -> (port: Int, path: String) {
        let file = profile.appendingPathComponent("DevToolsActivePort")
        let deadline = ContinuousClock.now + limit
        while ContinuousClock.now < deadline {
            if let text = try? String(contentsOf: file, encoding: .utf8) {
                let lines = text.split(separator: "\n")
                if lines.count >= 2, let port = Int(lines[0]) { return (port, String(lines[1])) }
            }
            try await Task.sleep(for: .milliseconds(50))
        }
        throw Failure(description: "chromium did not open its DevTools port within \(limit)")
    }

    /// A new page's DevTools socket, opened through the browser's. (Not through `/json/list`:
    /// FoundationNetworking fails on the headers Chromium answers it with.)
    private static func pageSocket(in profile: URL, within limit: Duration) async throws -> String {
        let (port, path) = try await browserSocket(in: profile, within: limit)
        let browser = DevToolsSession(url: "ws://127.0.0.1:\(port)\(path)")
        defer { browser.close() }
        let created = try await browser.call("Target.createTarget", ["url": .string("about:blank")], timeout: limit)
        guard case .object(let fields) = created, case .string(let target)? = fields["targetId"] else {
            throw Failure(description: "chromium opened no page: \(created)")
        }
        return "ws://127.0.0.1:\(port)/devtools/page/\(target)"
    }

    public struct Failure: Error, CustomStringConvertible {
        public let description: String

        public init(description: String) {
            self.description = description
        }
    }
}

/// One DevTools socket: calls numbered, each answered by the message with its number.
private final class DevToolsSession: Sendable {
    private let calls = Calls()
    private let outgoing: AsyncStream<String>.Continuation
    private let task: Task<Void, Never>

    init(url: String) {
        let (messages, outgoing) = AsyncStream.makeStream(of: String.self)
        self.outgoing = outgoing
        let calls = self.calls
        var logger = Logger(label: "devtools")
        logger.logLevel = .critical
        task = Task {
            _ = try? await WebSocketClient.connect(url: url, configuration: .init(maxFrameSize: 64 << 20), logger: logger) { inbound, outbound, _ in
                try await withThrowingTaskGroup(of: Void.self) { group in
                    group.addTask { for await message in messages { try await outbound.write(.text(message)) } }
                    for try await message in inbound.messages(maxSize: 64 << 20) {
                        guard case .text(let text) = message else { continue }
                        calls.receive(text)
                    }
                    group.cancelAll()
                }
            }
            calls.failAll()
        }
    }

    /// Calls `method`; throws its error, or when no answer came within `timeout`.
    func call(_ method: String, _ parameters: [String: JSONValue] = [:], timeout: Duration) async throws -> JSONValue {
        let id = calls.nextID()
        let message = JSONValue.object(["id": .number(Double(id)), "method": .string(method), "params": .object(parameters)])
        let text = String(decoding: try JSONEncoder().encode(message), as: UTF8.self)
        let calls = self.calls
        let timer = Task {
            try? await Task.sleep(for: timeout)
            calls.fail(id, Failure(description: "\(method) got no answer within \(timeout)"))
        }
        defer { timer.cancel() }
        return try await withCheckedThrowingContinuation { continuation in
            if calls.wait(id, continuation) { outgoing.yield(text) }
        }
    }

    func close() {
        outgoing.finish()
        task.cancel()
        calls.failAll()
    }

    struct Failure: Error, CustomStringConvertible {
        let description: String
    }

    /// The calls waiting for their answers, shared with the socket's task.
    private final class Calls: Sendable {
        private struct State {
            var lastID = 0
            var waiting: [Int: CheckedContinuation<JSONValue, any Error>] = [:]
            var closed = false
        }

        private let state = Mutex(State())

        func nextID() -> Int {
            state.withLock { state in
                state.lastID += 1
                return state.lastID
            }
        }

        /// Keeps `continuation` for call `id`; `false`, with the continuation resumed with an
        /// error, once the socket is closed.
        func wait(_ id: Int, _ continuation: CheckedContinuation<JSONValue, any Error>) -> Bool {
            let closed = state.withLock { state in
                if !state.closed { state.waiting[id] = continuation }
                return state.closed
            }
            if closed { continuation.resume(throwing: Failure(description: "the DevTools socket is closed")) }
            return !closed
        }

        func receive(_ text: String) {
            guard case .object(let message)? = try? JSONDecoder().decode(JSONValue.self, from: Data(text.utf8)),
                case .number(let number)? = message["id"]
            else { return }
            let continuation = state.withLock { $0.waiting.removeValue(forKey: Int(number)) }
            if let error = message["error"] {
                continuation?.resume(throwing: Failure(description: "DevTools error: \(error)"))
            } else {
                continuation?.resume(returning: message["result"] ?? .null)
            }
        }

        func fail(_ id: Int, _ error: Failure) {
            state.withLock { $0.waiting.removeValue(forKey: id) }?.resume(throwing: error)
        }

        func failAll() {
            let waiting = state.withLock { state in
                state.closed = true
                defer { state.waiting = [:] }
                return state.waiting
            }
            for continuation in waiting.values { continuation.resume(throwing: Failure(description: "the DevTools socket closed")) }
        }
    }
}
