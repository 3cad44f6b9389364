import Logging
import StateLoopServer
import TestSupport
import Testing

#if PostgreSQL
    import StateLoopServerPostgres
#endif

/// The URL of a new database on the throwaway PostgreSQL server the tests of this process
/// share; `nil`, with an issue saying what to do, when its binaries are missing or when
/// Nightride was built without its `PostgreSQL` trait.
func newPostgresDatabase() async throws -> String? {
    #if PostgreSQL
        if let missing = ThrowawayPostgres.missing {
            Issue.record(Comment(rawValue: missing))
            return nil
        }
        return try await ThrowawayPostgres.newDatabaseURL()
    #else
        // Said by every test that needs the database, rather than left out in silence: the suite
        // is whole only with the trait, as the README's test command builds it.
        Issue.record(
            "Nightride was built without its PostgreSQL trait: run swift test --package-path Nightride --traits PostgreSQL (or set STATELOOP_POSTGRES_TESTS=0 to leave these tests out)"
        )
        return nil
    #endif
}

/// A store of its own on the database at `url`, as another instance opens it, and what closes
/// its connections.
func openPostgresStore(url: String, logger: Logger) async throws -> (store: any ServerStore, close: @Sendable () -> Void) {
    #if PostgreSQL
        // The deadline is a hang guard: beside CPU hogs the default one can run out while the
        // throwaway server is slow to answer.
        let store = try await PostgresStore(url: url, deadline: .seconds(60), logger: logger)
        return (store, { store.close() })
    #else
        throw PostgreSQLLeftOut()
    #endif
}

/// Nightride was built without its `PostgreSQL` trait.
struct PostgreSQLLeftOut: Error, CustomStringConvertible {
    var description: String { "Nightride was built without its PostgreSQL trait: build it with --traits PostgreSQL" }
}
