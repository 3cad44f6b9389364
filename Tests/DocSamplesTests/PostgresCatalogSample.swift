import StateLoopServer
import StateLoopServerPostgres

/// The PostgreSQL catalog's sample, compiled.
enum PostgresCatalogSample {
    static func open() async throws -> SyncServer<CatalogSamples.Rules> {
        typealias Rules = CatalogSamples.Rules
        // Sources/StateLoopServerPostgres/StateLoopServerPostgres.docc/StateLoopServerPostgres.md:
        let store = try await PostgresStore(url: "postgres://app@127.0.0.1:5432/app")
        let server = SyncServer(store: store, access: Rules())
        // End of the example.
        return server
    }
}
