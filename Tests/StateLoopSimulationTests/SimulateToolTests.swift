import Foundation
import TestSupport
import Testing

/// `stateloop-simulate`, run as a child process (a simulation takes the runtime's hooks of the
/// whole process, which the tests running beside it share).
@Suite struct SimulateToolTests {
    /// A seed run twice takes the same steps in each scenario (the same digests); another seed
    /// takes others.
    @Test func aSeedReplaysExactly() async throws {
        let first = try await run(["--seed", "17"])
        let again = try await run(["--seed", "17"])
        let other = try await run(["--seed", "18"])
        #expect(first.status == 0, "\(first.stdout)\(first.stderr)")
        // Each scenario's line, from its name on: "resources: digest …, … steps, … simulated".
        let digest = { (output: String) in
            output.split(separator: "\n").filter { $0.hasPrefix("seed ") }.map { $0.split(separator: " ").dropFirst(2).joined(separator: " ") }
        }
        #expect(digest(first.stdout).count == 3, "one line for each scenario: \(first.stdout)")
        #expect(digest(first.stdout) == digest(again.stdout), "the same seed, another run:\n\(first.stdout)\n\(again.stdout)")
        #expect(digest(first.stdout) != digest(other.stdout))
    }

    /// Many seeds of every scenario, each its own interleaving and faults: none fails, none
    /// stalls, and no job escapes the simulation, whether one process runs them or three share
    /// them.
    @Test func manySeedsPass() async throws {
        let ended = try await run(["--seeds", "20", "--jobs", "1"])
        #expect(ended.status == 0, "\(ended.stdout)\(ended.stderr)")
        #expect(ended.stdout.contains("20 seeds, 0 failed"), "\(ended.stdout)")
        let shared = try await run(["--seeds", "20", "--jobs", "3"])
        #expect(shared.status == 0, "\(shared.stdout)\(shared.stderr)")
        #expect(shared.stdout.contains("20 seeds, 0 failed"), "\(shared.stdout)")
        #expect(!shared.stdout.contains("worker failed"), "a worker's count is the parent's to read: \(shared.stdout)")
    }

    /// A traced seed prints what its scenario recorded, each event after its step and simulated
    /// time, the same byte for byte when run again, and takes the same steps as without the
    /// trace; `--trace` over many seeds is refused.
    @Test func aTraceFollowsOneSeed() async throws {
        let traced = try await run(["--seed", "17", "--scenario", "kit", "--trace"])
        let again = try await run(["--seed", "17", "--scenario", "kit", "--trace"])
        #expect(!traced.stderr.isEmpty && traced.stderr == again.stderr, "the same trace twice")
        let plain = try await run(["--seed", "17", "--scenario", "kit"])
        #expect(traced.status == 0, "\(traced.stdout)\(traced.stderr)")
        // The seed's line (its digest and steps); the summary after it says how long it took.
        let seedLine = { (output: String) in output.split(separator: "\n").first { $0.hasPrefix("seed ") } }
        #expect(seedLine(traced.stdout) != nil && seedLine(traced.stdout) == seedLine(plain.stdout), "\(traced.stdout)\(plain.stdout)")
        let lines = traced.stderr.split(separator: "\n")
        #expect(lines.contains { $0.hasPrefix("[step ") && $0.contains("seconds] client 0 appends 0") }, "\(traced.stderr.prefix(2_000))")
        let refused = try await run(["--seeds", "3", "--trace"])
        #expect(refused.status == 2 && refused.stderr.contains("--trace follows one seed"), "\(refused.stderr)")
    }

    /// The child's end; killed past a hang guard of 300 s (times ``hangGuardScale``), far
    /// beyond the seconds it takes.
    private func run(_ arguments: [String]) async throws -> ChildProcess.Ended {
        try await ChildProcess("stateloop-simulate", arguments).ended(within: .seconds(300))
    }
}
