import Foundation
import TestSupport
import Testing

/// `nightride-simulate`, run as a child process (a simulation takes the runtime's hooks of the
/// whole process, which the tests running beside it share): Nightride's server and clients in
/// one simulation, from a seed.
@Suite struct SimulateTests {
    /// A seed run twice takes the same steps and records the same events, byte for byte; another
    /// seed takes others. Seed 2's apps journal their state (files the replay writes again).
    @Test func aSeedReplaysExactly() async throws {
        let traced = try await run(["--seed", "2", "--trace"])
        let again = try await run(["--seed", "2", "--trace"])
        let other = try await run(["--seed", "6"])
        #expect(traced.status == 0, "\(traced.stdout)\(traced.stderr.suffix(2_000))")
        let seedLine = { (output: String) in output.split(separator: "\n").first { $0.hasPrefix("seed ") }?.split(separator: " ").dropFirst(2) }
        #expect(seedLine(traced.stdout) != nil && seedLine(traced.stdout) == seedLine(again.stdout), "\(traced.stdout)\(again.stdout)")
        #expect(seedLine(traced.stdout) != seedLine(other.stdout), "\(other.stdout)")
        #expect(!traced.stderr.isEmpty && traced.stderr == again.stderr, "the same trace twice")
        // The trace shows the app at work: a sign-in through the route, and rides.
        #expect(traced.stderr.contains("rider0: POST /login"), "\(traced.stderr.prefix(2_000))")
        #expect(traced.stderr.contains("POST /me/"), "\(traced.stderr.prefix(2_000))")
        #expect(traced.stderr.contains("the apps journal their state"), "\(traced.stderr.prefix(2_000))")
    }

    /// Seeds of riders and drivers, each its own interleaving and faults: none fails, none
    /// stalls, and no job escapes the simulation.
    @Test func manySeedsPass() async throws {
        let ended = try await run(["--seeds", "10", "--clients", "4"])
        #expect(ended.status == 0, "\(ended.stdout)\(ended.stderr)")
        #expect(ended.stdout.contains("10 seeds, 0 failed"), "\(ended.stdout)")
    }

    /// The child's end; killed past a hang guard of 300 s (times ``hangGuardScale``), far
    /// beyond the seconds it takes.
    private func run(_ arguments: [String]) async throws -> ChildProcess.Ended {
        try await ChildProcess("nightride-simulate", arguments).ended(within: .seconds(300))
    }
}
