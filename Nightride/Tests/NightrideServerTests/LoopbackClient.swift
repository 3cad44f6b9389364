import Foundation
import Logging
import NightrideHarness
import NightrideModel
import NightrideServer
import StateLoopServerTesting
import StateLoopSync
import StateLoopSyncTransports
import Synchronization
import Testing
import WSClient

/// Runs a Nightride server, in a harness with `faults`, on a free loopback port for the duration of `body`.
func withNightride<C: Clock>(
    _ configuration: NightrideServer.Configuration = .init(epoch: 1, loginLimits: .scriptedClients, passwordCost: 4),
    faults: FaultPlan? = nil,
    faultsEnabled: Bool = true,
    sampleHistory: Bool = false,
    clock: C = ContinuousClock(),
    _ body: (ServerHarness, LoopbackClient) async throws -> Void
) async throws where C.Duration == Duration {
    var logger = Logger(label: "nightride.test")
    logger.logLevel = .error
    let harness = ServerHarness(
        configuration: configuration, faults: faults, faultsEnabled: faultsEnabled, sampleHistory: sampleHistory, clock: clock, logger: logger)
    let port = try await harness.server.start()
    do {
        try await body(harness, LoopbackClient(port: port))
    } catch {
        await harness.server.stop()
        throw error
    }
    await harness.server.stop()
}

/// The client side of the loopback tests: StateLoop's transports where they fit, plain
/// URLSession for the rest.
struct LoopbackClient: Sendable {
    let port: Int

    var base: String { "http://127.0.0.1:\(port)" }

    func url(_ path: String) -> URL {
        URL(string: base + path)!
    }

    func auth(_ token: String) -> [String: String] {
        ["Authorization": "Bearer \(token)"]
    }

    /// Logs in as `name` (with the password `<name>-pw`, which a first login sets); returns
    /// the token.
    func login(_ name: String) async throws -> String {
        let (status, data): (Int, Data)
        do {
            (status, data) = try await send("POST", "/login", body: LoginRequest(name: name, password: "\(name)-pw"))
        } catch  where "\(error)".contains("remoteConnectionClosed") {
            // A pooled connection to an earlier server on the same port (a port given again by
            // the system, or a restart), closed as the request went out. A second sign-in is
            // harmless: it issues another session.
            (status, data) = try await send("POST", "/login", body: LoginRequest(name: name, password: "\(name)-pw"))
        }
        #expect(status == 200)
        return try JSONDecoder().decode(LoginResponse.self, from: data).token
    }

    func pull<Value: Decodable & Sendable>(_ path: String, token: String, as: Value.Type = Value.self) -> HTTPPull<Value> {
        HTTPPull(url: url(path), headers: auth(token))
    }

    func sender<M: Mutation>(_ path: String, token: String, as: M.Type = M.self) -> HTTPMutationSender<M> {
        HTTPMutationSender(url: url(path), headers: auth(token))
    }

    /// Connects a push socket of `path`; its messages arrive on the returned inbox.
    func pushes<Value: Decodable & Sendable>(_ path: String, token: String?, query: String = "", as: Value.Type = Value.self) -> PushInbox<Value> {
        PushInbox(
            WebSocketPush<Value>(
                url: "ws://127.0.0.1:\(port)\(path)\(query)",
                headers: token.map(auth) ?? [:],
                initialBackoff: .milliseconds(50)
            ))
    }

    /// Whether a push upgrade of `path` with `token` is refused (the connection never opens).
    func upgradeIsRefused(_ path: String, token: String) async -> Bool {
        var logger = Logger(label: "test")
        logger.logLevel = .critical
        var configuration = WebSocketClientConfiguration()
        configuration.additionalHeaders[.authorization] = "Bearer \(token)"
        do {
            try await WebSocketClient.connect(url: "ws://127.0.0.1:\(port)\(path)", configuration: configuration, logger: logger) { _, outbound, _ in
                try await outbound.close(.normalClosure, reason: nil)
            }
            return false
        } catch {
            return true
        }
    }

    /// A request with an optional token, JSON body and mutation id; returns status and body.
    func send(
        _ method: String, _ path: String, token: String? = nil, body: (some Encodable)? = Optional<String>.none, mutationID: String? = nil
    ) async throws -> (Int, Data) {
        var headers: [String: String] = [:]
        if let token { headers["Authorization"] = "Bearer \(token)" }
        if let mutationID { headers["Mutation-ID"] = mutationID }
        if body != nil { headers["Content-Type"] = "application/json" }
        return try await raw(method, path, headers: headers, body: try body.map { try JSONEncoder().encode($0) })
    }

    /// `method path` with `headers` and `body` as given: the status and the body, whatever the
    /// status.
    func raw(_ method: String, _ path: String, headers: [String: String] = [:], body: Data? = nil) async throws -> (Int, Data) {
        let answer = try await TestHTTPClient(port: port).send(method, path, headers: headers, body: body)
        return (answer.status, answer.body)
    }

    func get<Value: Decodable>(_ path: String, token: String, as: Value.Type = Value.self) async throws -> Value {
        let (status, data) = try await send("GET", path, token: token)
        #expect(status == 200, "GET \(path): \(String(decoding: data, as: UTF8.self))")
        return try JSONDecoder().decode(Value.self, from: data)
    }
}

/// The values pushed on one socket, kept running until `close()`.
final class PushInbox<Value: Decodable & Sendable>: Sendable {
    private let task: Task<Void, Never>
    private let mailbox = Mailbox<Versioned<Value>>()

    init(_ push: WebSocketPush<Value>) {
        task = Task { [mailbox] in
            await push.run { message in
                if case .value(let value) = message { mailbox.put(value) }
            }
        }
    }

    /// The next pushed value (reconnection hints are skipped); throws once `limit` passes
    /// without one, so that a push that never comes fails the test instead of hanging it.
    func next(within limit: Duration = .seconds(20)) async throws -> Versioned<Value> {
        try await mailbox.take(within: limit)
    }

    /// Values pushed but not taken yet.
    var pending: [Versioned<Value>] {
        mailbox.pending
    }

    func close() {
        task.cancel()
    }

    deinit {
        task.cancel()
    }
}

/// A queue whose `take` waits for a value.
final class Mailbox<Element: Sendable>: Sendable {
    private let items = Mutex<[Element]>([])

    func put(_ item: Element) {
        items.withLock { $0.append(item) }
    }

    /// The oldest item, waiting for one at most `limit` (polled: only real-socket tests use it).
    func take(within limit: Duration) async throws -> Element {
        let deadline = ContinuousClock.now + limit
        while true {
            if let item = items.withLock({ $0.isEmpty ? nil : $0.removeFirst() }) {
                return item
            }
            guard ContinuousClock.now < deadline else { throw NothingArrived(limit: limit) }
            try await Task.sleep(for: .milliseconds(5))
        }
    }

    /// No item arrived in time.
    struct NothingArrived: Error, CustomStringConvertible {
        let limit: Duration
        var description: String { "nothing arrived within \(limit)" }
    }

    var pending: [Element] {
        items.withLock { $0 }
    }
}

/// A mutation id of a client of its own, `<new client>:1`: the form StateLoopServer takes.
func freshID() -> MutationID {
    MutationID(client: ClientID(), sequence: 1)
}
