import TestSupport
import Testing

/// The URL of a new database on the throwaway PostgreSQL server the tests of this process
/// share; `nil`, with an issue saying how to install PostgreSQL, when its binaries are missing.
func newPostgresDatabase() async throws -> String? {
    if let missing = ThrowawayPostgres.missing {
        Issue.record(Comment(rawValue: missing))
        return nil
    }
    return try await ThrowawayPostgres.newDatabaseURL()
}
