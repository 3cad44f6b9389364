import Foundation
import HTTPTypes
import Hummingbird
import Logging
import NIOCore
import NIOEmbedded
import NIOWebSocket
import StateLoopServer
import StateLoopServerTesting
import StateLoopSimulation
import StateLoopSync
import Synchronization

/// The mutations scenario's server as the server kit: a `SyncServer` on an in-memory SQLite
/// store that runs its transactions on the calling thread, serving the list at `GET /list` and
/// taking appends at `POST /append`, each request through its routes (`InProcessHTTPClient`). The
/// kit applies a mutation id once, remembers its answer and counts the client that numbered it;
/// this type only says which device a bearer token is and whether its session holds.
///
/// The server's process may crash (``crash()``) and start again on the same store
/// (``restart()``). Each client's push socket is the kit's own, opened on an embedded channel
/// (``pushSocket(for:on:network:)``).
final class KitListServer: ListBackend {
    static let resource = ServerResource<[String]>("list")
    /// The data, which outlives a crash of the server's process.
    private let store: SQLiteStore
    private let expired = ExpiredSessions()
    private let logger: Logger
    /// The running instance, numbered; `nil` while the process is down.
    private let running = Mutex<(generation: Int, server: SyncServer<DeviceAccess>, http: InProcessHTTPClient)?>(nil)

    /// A server whose commits are timed by `clock`, from a fixed date, holding an empty list.
    static func start(clock: SimulationClock) async throws -> KitListServer {
        let kit = try KitListServer(clock: clock)
        kit.restart()
        try await kit.instance().server.update { try $0.write([], to: Self.resource, "shared") }
        return kit
    }

    private init(clock: SimulationClock) throws {
        let start = Date(timeIntervalSince1970: 1_800_000_000)
        store = try SQLiteStore(
            epoch: 1_800_000_000_000,
            now: { start.addingTimeInterval(Double(clock.now.offset.components.seconds)) },
            blocking: true)
        var logger = Logger(label: "simulated.kit")
        logger.logLevel = .critical
        self.logger = logger
    }

    /// The server's process dies: whatever it was answering is lost on the way back, and every
    /// request fails until ``restart()``. Its commits are in the store.
    func crash() {
        running.withLock { $0 = nil }
    }

    /// A new process of the server on the same store, as after a crash: nothing it held in
    /// memory is kept.
    func restart() {
        let server = SyncServer(store: store, access: DeviceAccess(expired: expired), logger: logger)
        server.serve(Self.resource, at: "list") { _, _ in "shared" }
        server.mutation(at: "append", body: AppendBody.self, changes: Self.resource, key: { _, _ in "shared" }) { transaction, _, body in
            var list = try transaction.read(Self.resource, "shared") ?? []
            list.append(body.text)
            try transaction.write(list, to: Self.resource, "shared")
        }
        let router = Router(context: SyncRequestContext.self)
        server.addRoutes(to: router)
        let http = InProcessHTTPClient(router: router, logger: logger)
        running.withLock { $0 = (($0?.generation ?? 0) + 1, server, http) }
    }

    /// The instance running now; throws `LostRequest` while the process is down.
    private func instance() throws -> (generation: Int, server: SyncServer<DeviceAccess>, http: InProcessHTTPClient) {
        guard let running = running.withLock({ $0 }) else { throw LostRequest() }
        return running
    }

    /// Sends a request to the running instance; its answer is lost if that instance crashed
    /// meanwhile.
    private func send(_ request: (InProcessHTTPClient) async throws -> TestHTTPResponse) async throws -> TestHTTPResponse {
        let instance = try instance()
        let answer = try await request(instance.http)
        guard running.withLock({ $0?.generation }) == instance.generation else { throw LostRequest() }
        return answer
    }

    func value(for client: ClientID, on device: Int) async throws -> Versioned<[String]> {
        let answer = try await send {
            try await $0.send("GET", "/list", headers: ["Authorization": "Bearer device\(device)", "Client-ID": client.rawValue])
        }
        guard answer.status == 200 else { throw HTTPStatusError(status: answer.status) }
        return try answer.decode()
    }

    func apply(_ append: Append, id: MutationID, on device: Int) async throws -> (Version, [ListPush]) {
        let answer = try await send {
            try await $0.send(
                "POST", "/append", json: AppendBody(text: append.text), mutationID: id.rawValue, headers: ["Authorization": "Bearer device\(device)"])
        }
        guard answer.status == 200 else { throw HTTPStatusError(status: answer.status) }
        return (try answer.decode(MutationReceipt.self).version, [])
    }

    /// A push socket as a client's transport runs it: opened on an embedded channel (no
    /// socket; its event loop driven here, on the simulation's thread and clock), its frames
    /// read every 500 ms of simulated time and each lost once in 20 until the network is calm;
    /// opened again one to three seconds after it ends (the server closed it, or crashed). A
    /// refusal for the session is handed to the resource, which stops it until a refresh.
    func pushSocket(
        for client: ClientID, on device: Int, network: SimulatedNetwork
    ) -> (@Sendable (_ receive: @escaping @Sendable (PushMessage<[String]>) async -> Void) async -> Void)? {
        { [self] receive in
            let head = HTTPRequest(
                method: .get, scheme: "http", authority: "127.0.0.1", path: "/list/push",
                headerFields: [.authorization: "Bearer device\(device)", HTTPField.Name("Client-ID")!: client.rawValue])
            while !Task.isCancelled {
                if let instance = try? instance() {
                    let channel = EmbeddedChannel()
                    channel.connect(to: try! SocketAddress(ipAddress: "127.0.0.1", port: 9), promise: nil)
                    do {
                        if let refused = try await instance.server.openPushSocket(head, on: channel, logger: logger) {
                            if refused == .unauthorized || refused == .forbidden {
                                await receive(.failed(HTTPStatusError(status: Int(refused.code))))
                                return
                            }
                        } else {
                            await read(channel, of: instance.generation, network: network, receive: receive)
                        }
                    } catch {}
                    _ = try? channel.finish(acceptAlreadyClosed: true)
                }
                try? await network.clock.sleep(for: .milliseconds(network.simulation.random(in: 1_000..<3_000)))
            }
        }
    }

    /// Reads `channel`'s frames until the socket closes, the instance that opened it is gone,
    /// or the task is cancelled.
    private func read(
        _ channel: EmbeddedChannel, of generation: Int, network: SimulatedNetwork,
        receive: @escaping @Sendable (PushMessage<[String]>) async -> Void
    ) async {
        let loop = channel.embeddedEventLoop
        var driven = network.clock.now
        while !Task.isCancelled, channel.isActive, running.withLock({ $0?.generation }) == generation {
            let now = network.clock.now
            loop.advanceTime(by: .nanoseconds(Int64(driven.duration(to: now) / .nanoseconds(1))))
            driven = now
            loop.run()
            while let frame = try? channel.readOutbound(as: WebSocketFrame.self) {
                guard frame.opcode == .text else {
                    if frame.opcode == .connectionClose { return }
                    continue
                }
                let data = Data(buffer: frame.unmaskedData)
                let message: PushMessage<[String]>?
                if let value = try? JSONDecoder().decode(Versioned<[String]>.self, from: data) {
                    message = .value(value)
                } else if let hint = try? JSONDecoder().decode(ChangeHint.self, from: data) {
                    message = hint.changed ? .changed : nil
                } else {
                    message = .failed(UnreadablePush(text: String(decoding: data, as: UTF8.self)))
                }
                if let message, (try? network.lose(oneIn: 20)) != nil {
                    if case .value(let value) = message { network.simulation.record("pushed \(value.version.counter)") }
                    await receive(message)
                }
            }
            try? await network.clock.sleep(for: .milliseconds(500))
        }
    }

    func subscribe(_ client: ClientID, on device: Int, _ delivery: AsyncStream<PushMessage<[String]>>.Continuation) async {}

    func unsubscribe(_ client: ClientID) async {}

    func expire(_ device: Int) async {
        _ = expired.devices.withLock { $0.insert(device) }
    }

    func signIn(_ device: Int) async {
        _ = expired.devices.withLock { $0.remove(device) }
    }

    var list: [String] {
        get async throws { try await instance().server.read { try $0.read(Self.resource, "shared") } ?? [] }
    }

    func finish() async {}
}

/// An append's body on the wire.
struct AppendBody: Codable, Sendable {
    var text: String
}

/// Who a request comes from: the device its bearer token names (`device<n>`), unless its
/// session expired. Every device reads and writes the shared list.
struct DeviceAccess: AccessPolicy {
    let expired: ExpiredSessions

    func principal(for request: Request) async throws -> Int? {
        guard let token = request.headers[.authorization], token.hasPrefix("Bearer device"),
            let device = Int(token.dropFirst("Bearer device".count))
        else { return nil }
        return expired.devices.withLock { $0.contains(device) } ? nil : device
    }

    func id(of device: Int) -> String { "device\(device)" }
    func mayRead(_ key: ResourceKey, as device: Int) -> Bool { true }
    func mayWrite(_ key: ResourceKey, as device: Int) -> Bool { true }
}

/// The devices whose session expired and that have not signed in since.
final class ExpiredSessions: Sendable {
    let devices = Mutex<Set<Int>>([])
}

/// A push the client could not read.
struct UnreadablePush: Error {
    var text: String
}
