import Foundation
import Hummingbird
import Logging
import StateLoopServer
import StateLoopServerTesting
import StateLoopSimulation
import StateLoopSync
import Synchronization

/// The mutations scenario's server as the server kit: a `SyncServer` on an in-memory SQLite
/// store that runs its transactions on the calling thread, serving the list at `GET /list` and
/// its push sockets, and taking appends at `POST /list`. Its clients reach it as an app does,
/// through a `SyncEndpoint`, here over the kit's `InProcessTransport` behind the scenario's
/// network (its `ServerProcess` inside a `LossyTransport`). The kit applies a mutation id once, remembers its answer and counts
/// the client that numbered it; this type only says which device a bearer token is and whether
/// its session holds.
///
/// The server's process (StateLoopServerTesting's `ServerProcess`) may crash (``crash()``) and
/// start again on the same store (``restart()``).
final class KitListServer: ListBackend {
    static let resource = ServerResource<[String]>("list")
    /// The data, which outlives a crash of the server's process.
    private let store: SQLiteStore
    private let expired = ExpiredSessions()
    private let logger: Logger
    /// The instance the process runs now, for the scenario's reads and writes; `nil` while down.
    private let running = Mutex<SyncServer<DeviceAccess>?>(nil)
    private let clock: SimulationClock
    /// The server's process, set once made.
    private let process = Mutex<ServerProcess?>(nil)

    /// A server whose commits are timed by `clock`, from a fixed date, holding an empty list.
    static func start(clock: SimulationClock) async throws -> KitListServer {
        let kit = try KitListServer(clock: clock)
        let process = try await ServerProcess { [kit] in kit.startInstance() }
        kit.process.withLock { $0 = process }
        try await kit.instance().update { try $0.write([], to: Self.resource, "shared") }
        return kit
    }

    private init(clock: SimulationClock) throws {
        self.clock = clock
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
        process.withLock { $0 }?.crash()
    }

    /// A new process of the server on the same store, as after a crash: nothing it held in
    /// memory is kept.
    func restart() async {
        try? await process.withLock { $0 }?.restart()
    }

    /// A new instance of the server on the store, made the running one: what the process
    /// runs at each start.
    private func startInstance() -> InProcessTransport {
        let server = SyncServer(store: store, access: DeviceAccess(expired: expired), logger: logger)
        server.serve(Self.resource, at: "list") { _, _ in "shared" }
        server.mutation(at: "list", body: AppendBody.self, changes: Self.resource, key: { _, _ in "shared" }) { transaction, _, body in
            var list = try transaction.read(Self.resource, "shared") ?? []
            list.append(body.text)
            try transaction.write(list, to: Self.resource, "shared")
        }
        let router = Router(context: SyncRequestContext.self)
        server.addRoutes(to: router)
        running.withLock { $0 = server }
        // The kit's push sockets run their timers every 500 ms of simulated time.
        return InProcessTransport(router: router, server: server, clock: clock, tick: .milliseconds(500), runsInSimulation: true, logger: logger)
    }

    /// The instance running now; throws `LostRequest` while the process is down.
    private func instance() throws -> SyncServer<DeviceAccess> {
        guard let server = running.withLock({ $0 }) else { throw LostRequest() }
        return server
    }

    /// The kit as `device`'s app reaches it: through its routes and its push sockets in this
    /// process, over `network`.
    func transport(for device: Int, network: SimulatedNetwork) -> LossyTransport {
        network.between(device, and: process.withLock { $0 }!)
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
        get async throws { try await instance().read { try $0.read(Self.resource, "shared") } ?? [] }
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
