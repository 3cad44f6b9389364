import BenchmarkSupport
import Foundation
import Hummingbird
import Logging
import StateLoopServer
import StateLoopServerPostgres
import Synchronization

#if canImport(FoundationNetworking)
    import FoundationNetworking
#endif

/// A running kit with one counter per client, and the clients' sequence numbers.
final class MutationFixture: Sendable {
    /// Where the values are kept.
    enum StoreKind: CaseIterable, Sendable {
        case durable, noFsync, memory, postgres

        var name: String {
            switch self {
            case .durable: "SQLite file, fsync per commit"
            case .noFsync: "baseline: SQLite file, no fsync"
            case .memory: "baseline: SQLite in memory"
            case .postgres: "PostgreSQL on loopback, fsync per commit"
            }
        }
    }

    struct Rules: AccessPolicy {
        func principal(for request: Request) async throws -> String? {
            request.bearerToken
        }
        func id(of user: String) -> String { user }
        func mayRead(_ key: ResourceKey, as user: String) -> Bool { key.id == user }
        func mayWrite(_ key: ResourceKey, as user: String) -> Bool { key.id == user }
    }

    struct Increment: Codable, Sendable {
        var by: Int
    }

    static let counters = ServerResource("counter", of: Int.self)

    let port: Int
    private let folder: URL
    private let host: SyncHost
    private let postgres: BenchPostgres?
    private let sequences = Mutex<[Int: UInt64]>([:])

    private init(port: Int, folder: URL, host: SyncHost, postgres: BenchPostgres?) {
        self.port = port
        self.folder = folder
        self.host = host
        self.postgres = postgres
    }

    static func start(store kind: StoreKind) async throws -> MutationFixture {
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("stateloop-server-bench-\(UUID())")
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        let path = folder.appendingPathComponent("server.sqlite").path
        let postgres = kind == .postgres ? try BenchPostgres.start() : nil
        let store: any ServerStore =
            switch kind {
            case .durable: try SQLiteStore(path: path, durability: .powerLoss)
            case .noFsync: try SQLiteStore(path: path, durability: .processCrash)
            case .memory: try SQLiteStore()
            case .postgres: try await PostgresStore(url: postgres!.url)
            }
        var logger = Logger(label: "bench")
        logger.logLevel = .critical
        let server = SyncServer(store: store, access: Rules(), logger: logger)
        server.serve(counters, at: "me/counter") { user, _ in user }
        server.mutation(at: "me/counter", body: Increment.self, changes: counters, key: { user, _ in user }) { transaction, user, increment in
            try transaction.write((try transaction.read(counters, user) ?? 0) + increment.by, to: counters, user)
        }
        let (host, port) = try await serve(server, logger: logger)
        return MutationFixture(port: port, folder: folder, host: host, postgres: postgres)
    }

    /// Runs `server` and its application on a free loopback port until the host is stopped;
    /// returns once it listens.
    static func serve<Access: AccessPolicy>(_ server: SyncServer<Access>, logger: Logger) async throws -> (host: SyncHost, port: Int) {
        let host = SyncHost(logger: logger) { port in
            // Every benchmark client connects from one loopback address: it gets the whole cap.
            .init(server, application: server.application(port: port, maximumConnectionsPerAddress: 10_000))
        }
        return (host, try await host.start())
    }

    /// Sends `count` mutations from `clients` clients at once, each client one at a time.
    func mutate(_ count: Int, clients: Int) async {
        await withTaskGroup(of: Void.self) { group in
            for client in 0..<clients {
                let share = count / clients + (client < count % clients ? 1 : 0)
                let first = sequences.withLock { sequences in
                    defer { sequences[client, default: 0] += UInt64(share) }
                    return sequences[client, default: 0] + 1
                }
                group.addTask {
                    for sequence in first..<(first + UInt64(share)) {
                        await self.send(client: client, sequence: sequence)
                    }
                }
            }
        }
    }

    private func send(client: Int, sequence: UInt64) async {
        var request = URLRequest(url: URL(string: "http://127.0.0.1:\(port)/me/counter")!)
        request.httpMethod = "POST"
        request.setValue("Bearer user\(client)", forHTTPHeaderField: "Authorization")
        request.setValue("client\(client):\(sequence)", forHTTPHeaderField: "Mutation-ID")
        request.httpBody = Data(#"{"by":1}"#.utf8)
        guard let (_, response) = try? await URLSession.shared.data(for: request),
            (response as? HTTPURLResponse)?.statusCode == 200
        else {
            FileHandle.standardError.write(Data("[Server] mutation client\(client):\(sequence) failed\n".utf8))
            return
        }
    }

    func stop() async {
        await host.stop()
        postgres?.stop()
        try? FileManager.default.removeItem(at: folder)
    }
}
