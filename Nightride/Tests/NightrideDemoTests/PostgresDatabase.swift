import TestSupport
import Testing

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
