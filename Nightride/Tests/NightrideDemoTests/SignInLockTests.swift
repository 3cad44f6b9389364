import Foundation
import Logging
import NightrideClient
import NightrideServer
import StateLoopServer
import Synchronization
import TestSupport
import Testing

/// Sign-ins stay out of the dispatch book's queue: every ride operation locks the book's row
/// first, and on a database shared by several instances a sign-in that waited there would wait
/// for every ride of every instance.
@Suite(
    "Nightride on PostgreSQL: sign-ins and the dispatch book", .timeLimit(.minutes(5)),
    .enabled(if: ThrowawayPostgres.testsEnabled, "STATELOOP_POSTGRES_TESTS=0"))
struct SignInLockTests {
    @Test("with the dispatch book's row held by another instance's ride operation, a new user signs up and an existing one signs in")
    func signInWhileTheBookIsHeld() async throws {
        guard let database = try await newPostgresDatabase() else { return }
        var logger = Logger(label: "nightride.test")
        logger.logLevel = .critical
        let server = NightrideServer(
            configuration: .init(postgresURL: database, port: 0, loginLimits: .scriptedClients, passwordCost: 4), logger: logger)
        let url = URL(string: "http://127.0.0.1:\(try await server.start())")!
        _ = try await NightrideAPI.login(server: url, name: "bob", password: "bob-pw")
        // Bob on duty: the book has a row.
        try await server.setDriverMode(true, for: "bob")

        // Another instance's ride operation: it reads the book (locking its row) and holds it.
        let (other, closeOther) = try await openPostgresStore(url: database, logger: logger)
        let (holding, release) = (Switch(), Switch())
        defer { release.set() }
        let holder = Task {
            try await other.write { transaction in
                _ = try transaction.value(of: ResourceKey(resource: "dispatch", id: "all"))
                holding.set()
                let deadline = ContinuousClock.now + .seconds(60) * hangGuardScale
                while !release.isSet, ContinuousClock.now < deadline {
                    Thread.sleep(forTimeInterval: 0.005)
                }
            }
        }
        #expect(await eventually { holding.isSet }, "the other instance never took the book")

        // Had a sign-in read the book, it would wait for the row past the store's deadline: 503.
        let ann = try await NightrideAPI.login(server: url, name: "ann", password: "ann-pw")
        #expect(ann.user == "ann", "a sign-up while the book is held")
        let bob = try await NightrideAPI.login(server: url, name: "bob", password: "bob-pw")
        #expect(bob.user == "bob", "a sign-in while the book is held")
        #expect(!release.isSet)

        release.set()
        try await holder.value
        closeOther()
        await server.stop()
    }
}

/// A flag one task sets and another reads.
private final class Switch: Sendable {
    private let value = Atomic<Bool>(false)
    func set() { value.store(true, ordering: .sequentiallyConsistent) }
    var isSet: Bool { value.load(ordering: .sequentiallyConsistent) }
}
