import StateLoopServer
import Testing

/// `Sources/StateLoopServer/StateLoopServer.docc/Server.md`'s sessions sample, run.
@Suite("Sources/StateLoopServer/StateLoopServer.docc/Server.md: the sessions sample")
struct SessionsSampleTests {
    @Test("a sign-in's token names its user until the sessions are revoked")
    func sample() async throws {
        let store = try SQLiteStore()
        #expect(try await ServerPageSamples.sessions(store: store, name: "ann", hash: "h") == "ann")
    }
}
