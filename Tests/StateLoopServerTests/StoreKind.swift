import Foundation
import StateLoopServer
import StateLoopServerPostgres
import TestSupport
import Testing

/// The stores the shared store suite runs against.
enum StoreKind: String, CaseIterable, Sendable, CustomTestStringConvertible {
    case sqlite
    case postgres

    var testDescription: String { rawValue }

    /// The stores the suite runs against: PostgreSQL only when `STATELOOP_POSTGRES_TESTS` is set.
    /// Work in progress (#15): one loaded run of the whole suite stalled with every task idle
    /// while these tests ran; until that is understood they stay out of a plain `swift test`.
    static var enabled: [StoreKind] {
        postgresTestsEnabled ? allCases : [.sqlite]
    }

    /// Whether the tests that start PostgreSQL servers run (`STATELOOP_POSTGRES_TESTS=1`).
    static var postgresTestsEnabled: Bool {
        ProcessInfo.processInfo.environment["STATELOOP_POSTGRES_TESTS"] != nil
    }

    /// Runs `body` with a new, empty store of this kind, then disposes of it: an in-memory
    /// SQLite store, or a PostgreSQL store in a database of a throwaway server of its own.
    func withStore(_ body: (any ServerStore) async throws -> Void) async throws {
        switch self {
        case .sqlite:
            try await body(try SQLiteStore())
        case .postgres:
            try await withPostgres { url in try await body(try await PostgresStore(url: url)) }
        }
    }
}

/// Runs `body` with the URL of a new database on a throwaway PostgreSQL server, stopped after.
func withPostgres(_ body: (String) async throws -> Void) async throws {
    guard ThrowawayPostgres.isAvailable else {
        Issue.record("PostgreSQL is not installed (no \(ThrowawayPostgres.binaries)/initdb): apt-get install postgresql, or set STATELOOP_PG_BIN")
        return
    }
    let server = try await ThrowawayPostgres.start()
    do {
        let database = try await server.createDatabase("stateloop")
        try await body("postgres://\(server.user)@127.0.0.1:\(server.port)/\(database)")
    } catch {
        await server.stop()
        throw error
    }
    await server.stop()
}
