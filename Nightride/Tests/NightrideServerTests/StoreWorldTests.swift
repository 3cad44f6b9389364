import Hummingbird
import NightrideModel
import StateLoopServer
import StateLoopWire
import TestSupport
import Testing

@testable import NightrideServer

/// The ride rules on StateLoopServer's store give what they give in memory: the same answers,
/// the same values, the same version counters.
@Suite("Nightride rules on the store")
struct StoreWorldTests {
    static let users = ["ann", "bob", "cat", "dan"]
    static let rules = RideRules(inactivityTimeout: .seconds(30), catalog: PlaceCatalog())

    @Test(
        "seeded random operations: each answer, value and version counter on a SQLite store equals the memory core's",
        arguments: [1, 2, 3, 4] as [UInt64])
    func sameAsMemory(seed: UInt64) async throws {
        var random = SplitMix64(seed: seed)
        var core = RulesOracle(epoch: 7, inactivityTimeout: Self.rules.inactivityTimeout)
        let store = try await Store()
        var now = Duration.zero
        for user in Self.users {
            _ = try core.login(name: user, token: user, proof: .sets(hash: "h-\(user)"), at: now)
            try await store.operate(at: now) { operation in
                _ = try operation.world.signIn(name: user, proof: .sets(hash: "h-\(user)")) { _ in [] }
            }
        }
        for step in 0..<300 {
            now += .seconds(Int.random(in: 0...12, using: &random))
            let user = Self.users.randomElement(using: &random)!
            let operation = Self.operations.randomElement(using: &random)!
            let inMemory = Self.outcome { () throws(RideRefusal) in try operation.memory(&core, user, now) }
            // The core applies the switch-offs due before the operation, in a commit of their
            // own; so does the server's timer for a store.
            try await store.operate(at: now) { _ in }
            let onStore = try await store.outcome(at: now) { try operation.store(&$0, user) }
            #expect(inMemory == onStore, "step \(step): \(operation.name) by \(user) at \(now)")
            for name in Self.users {
                let expected = try #require(core.snapshot(of: name))
                let stored = try await store.snapshot(of: name)
                #expect(stored.driverMode == expected.driverMode.value && stored.ride == expected.ride.value, "step \(step): \(name)'s values")
                #expect(stored.counters == [expected.driverMode.version.counter, expected.ride.version.counter], "step \(step): \(name)'s versions")
            }
        }
    }

    @Test("an operation that is refused writes nothing; one that sets a value back to what is stored writes no version")
    func refusalsAndNoChanges() async throws {
        let store = try await Store()
        try await store.operate(at: .zero) { operation in
            _ = try operation.world.signIn(name: "bob", proof: .sets(hash: "h")) { _ in [] }
        }
        let before = try await store.snapshot(of: "bob")
        let refused = try await store.outcome(at: .seconds(1)) { try $0.perform(.accept, for: "bob") }
        #expect(refused == "invalidTransition")
        // On, then off again in one operation: the stored value did not change.
        try await store.operate(at: .seconds(2)) { operation in
            try operation.setDriverMode(true, for: "bob")
            try operation.setDriverMode(false, for: "bob")
        }
        #expect(try await store.snapshot(of: "bob").counters == before.counters)
        // History rows are numbered per user from 1, and a name that starts like another is
        // kept apart from it. New names cannot hold a "/" (the kit's AccountName.checkedForSignUp), but
        // an account made before that rule can: it is made here as it was then.
        try await store.operate(at: .seconds(3)) { operation in
            try operation.world.createAccount(
                Account(name: "bob/x", passwordHash: "h"), key: "bob/x",
                history: [Ride(id: "h1", passenger: "bob/x", destination: PlaceCatalog.paris[0])]
            )
        }
        #expect(try await store.lastHistorySequence(of: "bob") == 0)
        #expect(try await store.lastHistorySequence(of: "bob/x") == 1)
    }

    // MARK: Helpers

    /// One kind of operation, done the same way on both worlds.
    struct Operation: Sendable {
        let name: String
        let memory: @Sendable (inout RulesOracle, String, Duration) throws(RideRefusal) -> Void
        let store: @Sendable (inout RideOperation<StoreWorld>, String) throws -> Void
    }

    static let operations: [Operation] = {
        let bastille = PlaceCatalog.paris[5]
        var list = [true, false].map { on in
            Operation(
                name: "driver mode \(on)",
                memory: { core, user, now throws(RideRefusal) in _ = try core.setDriverMode(on, for: user, at: now) },
                store: { operation, user in try operation.setDriverMode(on, for: user) }
            )
        }
        for action in [RideAction.request(destination: bastille), .cancel, .accept, .arrive, .finish, .finishSurvey] {
            list.append(
                Operation(
                    name: "\(action.name)",
                    memory: { core, user, now throws(RideRefusal) in _ = try core.perform(action, for: user, at: now) },
                    store: { operation, user in try operation.perform(action, for: user) }
                ))
        }
        return list
    }()

    static func outcome(_ body: () throws(RideRefusal) -> Void) -> String {
        do throws(RideRefusal) {
            try body()
            return "applied"
        } catch {
            return error.code.rawValue
        }
    }

    /// A SQLite store in memory behind a sync server, operated on through `update`.
    struct Store {
        let server: SyncServer<NoAccess>

        init() async throws {
            server = SyncServer(store: try SQLiteStore(), access: NoAccess())
        }

        func operate(at now: Duration, _ body: @escaping @Sendable (inout RideOperation<StoreWorld>) throws -> Void) async throws {
            try await server.update { transaction in
                try StoreWorld.operate(in: transaction, at: now, rules: StoreWorldTests.rules, body)
            }
        }

        /// "applied", or the code of the refusal (the update is then not committed).
        func outcome(at now: Duration, _ body: @escaping @Sendable (inout RideOperation<StoreWorld>) throws -> Void) async throws -> String {
            do {
                try await operate(at: now, body)
                return "applied"
            } catch let refusal as RideRefusal {
                return refusal.code.rawValue
            }
        }

        func snapshot(of user: String) async throws -> (driverMode: Bool?, ride: RideStatus?, counters: [UInt64?]) {
            try await server.update { transaction in
                (
                    try transaction.read(NightrideResources.driverMode, user),
                    try transaction.read(NightrideResources.ride, user),
                    [
                        try transaction.version(of: NightrideResources.driverMode, user)?.counter,
                        try transaction.version(of: NightrideResources.ride, user)?.counter,
                    ]
                )
            }
        }

        func lastHistorySequence(of user: String) async throws -> Int {
            try await server.update { transaction in try StoreWorld.lastHistorySequence(of: user, in: transaction) }
        }
    }

    /// Nobody: the tests act as the server itself, through `update`.
    struct NoAccess: AccessPolicy {
        func principal(for request: Request) async throws -> String? { nil }
        func id(of principal: String) -> String { principal }
        func mayRead(_ key: ResourceKey, as principal: String) -> Bool { false }
        func mayWrite(_ key: ResourceKey, as principal: String) -> Bool { false }
    }
}
