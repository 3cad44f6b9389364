import Foundation
import NightrideHarness
import Testing

/// `docs/Nightride.md`'s in-process harness sample: compiled, and run.
@Suite("docs/Nightride.md: the harness sample", .timeLimit(.minutes(4)))
struct HarnessSampleTests {
    @Test("a harness with faults starts on a free port, reads its truth and stats, and stops")
    func sample() async throws {
        // docs/Nightride.md:
        let harness = ServerHarness(
            configuration: .init(port: 0, inactivityTimeout: .seconds(30)),  // a free port
            faults: FaultPlan(seed: 7)  // latency 10–400 ms, 20 % lost pushes, cuts every 5–20 s
        )
        let port = try await harness.server.start()  // http://127.0.0.1:\(port)
        // … run clients against it …
        harness.faultsEnabled = false  // stop the trouble, then measure convergence
        let truth = try await harness.truth().snapshot(of: "ann")  // what the server holds now
        print(harness.stats)  // requests per route, open sockets, pushes sent/dropped, cuts
        await harness.server.stop()
        // End of the example.
        #expect(port > 0)
        #expect(truth == nil, "no one signed in")
    }
}
