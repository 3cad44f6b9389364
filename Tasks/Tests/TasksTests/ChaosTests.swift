import Foundation
import TasksDemo
import Testing

/// The demo's run as a test: several seeds of users editing the same boards through server
/// restarts, relaunches, outages and changes of membership; every device must converge on the
/// server's rows with nothing left unsent.
@Suite("Tasks: chaos", .serialized, .timeLimit(.minutes(10)))
struct ChaosTests {
    /// Seeds from `TASKS_CHAOS_SEEDS` (a count), 3 by default.
    static var seeds: [UInt64] {
        let count = ProcessInfo.processInfo.environment["TASKS_CHAOS_SEEDS"].flatMap { Int($0) } ?? 3
        return (1...max(1, count)).map(UInt64.init)
    }

    @Test("every device converges, nothing lost, nothing left unsent", arguments: seeds)
    func converges(seed: UInt64) async throws {
        let verdict = try await TasksDemo(plan: .init(seed: seed, steps: 60, settle: .seconds(120))).run()
        #expect(verdict.passed, "\(verdict)")
    }
}
