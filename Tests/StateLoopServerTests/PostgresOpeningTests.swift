import Foundation
import StateLoopServerPostgres
import TestSupport
import Testing

#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// What opening a PostgreSQL store says when it cannot: at once, naming what is missing and the
/// command that creates it, where the connection pool alone would retry for ever.
@Suite("PostgreSQL store: opening", .timeLimit(.minutes(5)), .enabled(if: StoreKind.postgresTestsEnabled, "STATELOOP_POSTGRES_TESTS=0"))
struct PostgresOpeningTests {
    @Test(
        "a database that does not exist, a role that does not, and an address where nothing listens: each refused within the deadline, saying how to fix it"
    )
    func refusals() async throws {
        guard postgresIsInstalled() else { return }
        let server = try await ThrowawayPostgres.shared()
        let base = "postgres://\(server.user)@127.0.0.1:\(server.port)"
        try await expectRefusal(
            "\(base)/nosuchdatabase",
            [
                "the database \"nosuchdatabase\" does not exist at 127.0.0.1:\(server.port)", "createdb -h 127.0.0.1 -p \(server.port)",
                "-O \(server.user) nosuchdatabase",
            ])
        try await expectRefusal(
            "postgres://nosuchrole@127.0.0.1:\(server.port)/postgres",
            [
                "the role \"nosuchrole\" does not exist at 127.0.0.1:\(server.port)", "createuser -h 127.0.0.1 -p \(server.port)",
                "CREATE ROLE \"nosuchrole\" LOGIN;",
            ])
        let (descriptor, closed) = try LoopbackSocket.boundWithoutListening()
        defer { close(descriptor) }
        try await expectRefusal("postgres://\(server.user)@127.0.0.1:\(closed)/postgres", ["nothing listens at 127.0.0.1:\(closed)"])
    }

    /// Opening `url` fails with ``PostgresStore/OpenFailure`` whose description holds every one of
    /// `parts`. The time is printed: these answers come back at once (the server answers). The
    /// store's deadline is raised to 120 s, and the 300 s checked here is a hang guard: beside
    /// CPU hogs, the throwaway server once took more than the product's 10 s to answer, and the
    /// store said "did not answer" instead of what the server would have said.
    private func expectRefusal(_ url: String, _ parts: [String], sourceLocation: SourceLocation = #_sourceLocation) async throws {
        let started = ContinuousClock.now
        do {
            let store = try await PostgresStore(url: url, deadline: .seconds(120))
            store.close()
            Issue.record("\(url) opened", sourceLocation: sourceLocation)
        } catch let failure as PostgresStore.OpenFailure {
            for part in parts {
                #expect(failure.description.contains(part), "\(failure.description)", sourceLocation: sourceLocation)
            }
        }
        let waited = ContinuousClock.now - started
        print("opening \(url) refused after \(waited)")
        #expect(waited < .seconds(300), "opening \(url) took \(waited)", sourceLocation: sourceLocation)
    }
}
