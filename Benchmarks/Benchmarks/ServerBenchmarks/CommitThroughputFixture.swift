import BenchmarkSupport
import Foundation
import Logging
import StateLoopServer
import StateLoopServerPostgres
import StateLoopWire

/// Several instances' stores on one PostgreSQL database, each committing from as many tasks as
/// it has writers, each commit one value of a key of its own: what limits commits per second is
/// then what every commit shares across instances (the feed's lock, and the lock PostgreSQL
/// takes at the commit of a transaction that notifies), not contention on keys.
final class CommitThroughputFixture: Sendable {
    static let writersPerInstance = 4

    private let postgres: BenchPostgres
    private let stores: [PostgresStore]

    private init(postgres: BenchPostgres, stores: [PostgresStore]) {
        self.postgres = postgres
        self.stores = stores
    }

    /// A new database and `instances` stores on it, notifying each other or not.
    static func start(instances: Int, notifies: Bool) async throws -> CommitThroughputFixture {
        let postgres = try BenchPostgres.start()
        var logger = Logger(label: "bench.postgres")
        logger.logLevel = .error
        var stores: [PostgresStore] = []
        do {
            for _ in 0..<instances {
                stores.append(
                    try await PostgresStore(
                        url: postgres.url, writers: writersPerInstance, deadline: .seconds(30), logger: logger, notifiesOtherInstances: notifies))
            }
        } catch {
            for store in stores { store.close() }
            postgres.stop()
            throw error
        }
        return CommitThroughputFixture(postgres: postgres, stores: stores)
    }

    /// Makes `count` commits, shared by every writer of every instance.
    func commit(_ count: Int) async throws {
        let writers = stores.count * Self.writersPerInstance
        try await withThrowingTaskGroup(of: Void.self) { group in
            for writer in 0..<writers {
                let store = stores[writer % stores.count]
                let share = count / writers + (writer < count % writers ? 1 : 0)
                group.addTask {
                    let key = ResourceKey(resource: "bench", id: "w\(writer)")
                    for round in 0..<share {
                        _ = try await store.write { try $0.write(Data("\(round)".utf8), to: key) }
                    }
                }
            }
            try await group.waitForAll()
        }
    }

    func stop() {
        for store in stores { store.close() }
        postgres.stop()
    }
}
