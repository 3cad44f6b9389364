import Foundation
import StateLoopServer
import StateLoopServerPostgres
import StateLoopWire
import Testing

/// What the PostgreSQL store adds to the shared store suite (`StoreTests`): several stores, as
/// several server instances would hold them, on one database.
@Suite("PostgreSQL store", .timeLimit(.minutes(2)), .enabled(if: StoreKind.postgresTestsEnabled, "STATELOOP_POSTGRES_TESTS is not set (see StoreKind.enabled)"))
struct PostgresStoreTests {
    let key = ResourceKey(resource: "board", id: "main")

    @Test("two stores on one database share the epoch; writers of one key on both get one counter each, none twice")
    func twoInstancesOneCounter() async throws {
        try await withPostgres { url in
            let stores = [try await PostgresStore(url: url), try await PostgresStore(url: url)]
            #expect(stores[0].epoch == stores[1].epoch)
            let versions = try await withThrowingTaskGroup(of: UInt64.self) { group in
                for index in 0..<40 {
                    group.addTask { try await stores[index % 2].write { try $0.write(Data("\(index)".utf8), to: key) }.counter }
                }
                return try await group.reduce(into: [UInt64]()) { $0.append($1) }
            }
            #expect(versions.sorted() == Array(1...40))
        }
    }

    @Test("the same mutation id sent to two stores at once runs once: the later one waits and finds the answer")
    func sameMutationOnTwoInstances() async throws {
        try await withPostgres { url in
            let stores = [try await PostgresStore(url: url), try await PostgresStore(url: url)]
            let answer = RememberedAnswer(fingerprint: 1, status: 200, body: Data("{}".utf8))
            let runs = try await withThrowingTaskGroup(of: Bool.self) { group in
                for index in 0..<20 {
                    group.addTask {
                        try await stores[index % 2].write { transaction in
                            guard try transaction.answer(to: "c:1", scope: "ann") == nil else { return false }
                            _ = try transaction.write(Data("1".utf8), to: key)
                            try transaction.remember(answer, to: "c:1", scope: "ann", client: ClientID(rawValue: "c"), sequence: 1)
                            return true
                        }
                    }
                }
                return try await group.reduce(into: 0) { $0 += $1 ? 1 : 0 }
            }
            #expect(runs == 1)
            let stored = try await stores[1].read(key, lastMutationIDOf: nil, scope: "ann")
            #expect(stored.value?.version.counter == 1)
        }
    }

    @Test("a database left by another store opens with the same epoch and values; its schema is not created twice")
    func reopened() async throws {
        try await withPostgres { url in
            let epoch: UInt64
            do {
                let first = try await PostgresStore(url: url)
                epoch = first.epoch
                _ = try await first.write { try $0.write(Data("7".utf8), to: key) }
            }
            let second = try await PostgresStore(url: url)
            #expect(second.epoch == epoch)
            let read = try await second.read(key, lastMutationIDOf: nil, scope: "")
            #expect(read.value?.json == Data("7".utf8))
        }
    }

    @Test("a URL that is not postgres://user@host/database is refused with a message that says how to write one")
    func badURL() async throws {
        let error = await #expect(throws: PostgresStore.BadURL.self) { try await PostgresStore(url: "mysql://x@127.0.0.1/db") }
        #expect(String(describing: error).contains("postgres://user[:password]@host[:port]/database"))
    }
}
