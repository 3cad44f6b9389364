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

    /// The stores the suite runs against: both, unless `STATELOOP_POSTGRES_TESTS=0`.
    static var enabled: [StoreKind] {
        postgresTestsEnabled ? allCases : [.sqlite]
    }

    /// Whether the tests that need PostgreSQL run (``ThrowawayPostgres/testsEnabled``).
    static var postgresTestsEnabled: Bool {
        ThrowawayPostgres.testsEnabled
    }

    /// Runs `body` with a new, empty store of this kind, then disposes of it: an in-memory
    /// SQLite store, or a PostgreSQL store in a database of a throwaway server of its own.
    /// `now` is the store's clock (commit times, the clients' last contact).
    func withStore(now: @escaping @Sendable () -> Date = { Date() }, _ body: (any ServerStore) async throws -> Void) async throws {
        switch self {
        case .sqlite:
            try await body(try SQLiteStore(now: now))
        case .postgres:
            try await withPostgres { url in
                // Closed after the test, with its connections: the suite's tests share one
                // server, whose connections are limited.
                let store = try await PostgresStore(url: url, deadline: hangGuard, now: now)
                defer { store.close() }
                try await body(store)
            }
        }
    }
}

/// Runs `body` with the URL of a new database on the throwaway PostgreSQL server the tests of
/// this process share (started on first use, stopped as the process exits).
func withPostgres(_ body: (String) async throws -> Void) async throws {
    guard postgresIsInstalled() else { return }
    try await body(try await ThrowawayPostgres.newDatabaseURL())
}

/// Whether PostgreSQL's binaries are installed; records an issue saying how to install them
/// when they are not.
func postgresIsInstalled() -> Bool {
    guard let missing = ThrowawayPostgres.missing else { return true }
    Issue.record(Comment(rawValue: missing))
    return false
}
