import Foundation
import NightrideDemo
import TestSupport
import Testing

/// The demo and the chaos run over real sockets on loopback. Real time: these run the whole
/// product, server and clients, as a user would.
@MainActor
@Suite("Nightride end to end", .serialized, .timeLimit(.minutes(15)))
struct EndToEndTests {
    @Test("the demo's scenario holds its verdict under several fault seeds", arguments: [7 as UInt64, 11, 23])
    func demoScenario(seed: UInt64) async throws {
        var transcript: [String] = []
        // Four times the demo's 3 s of driver idling: on a loaded machine (two CPU hogs and two
        // builds) a request took 6 s to reach the driver, who was then switched off before the
        // ride was offered.
        // Steps get 30 s, a hang guard: the idle step waits for the 12 s switch-off.
        let options = DemoScenario.Options(seed: seed, inactivity: .seconds(12), stepTimeout: .seconds(30))
        let report = try await DemoScenario(options: options) { transcript.append($0) }.run()
        #expect(holds(report), "\(report.table)\n\(transcript.joined(separator: "\n"))")
        #expect(report.clients.map(\.user) == ["ann", "bob"])
        #expect(report.clients.allSatisfy { $0.eventsJournaled > 0 })
        #expect(
            report.convergence.map(\.fault) == [
                "network cut", "faults off", "server restart: ride kept", "sessions revoked: signed out", "signing in again",
            ])
        #expect(report.serverStats.pushesSent > 0)
    }

    @Test(
        "the demo's scenario holds its verdict on two instances on PostgreSQL, the passenger on one and the driver on the other",
        .enabled(if: ThrowawayPostgres.testsEnabled, "STATELOOP_POSTGRES_TESTS=0")
    )
    func demoOnTwoInstances() async throws {
        guard let database = try await newPostgresDatabase() else { return }
        var transcript: [String] = []
        let options = DemoScenario.Options(seed: 7, inactivity: .seconds(12), stepTimeout: .seconds(30), postgresURL: database, instances: 2)
        let report = try await DemoScenario(options: options) { transcript.append($0) }.run()
        #expect(holds(report), "\(report.table)\n\(transcript.joined(separator: "\n"))")
        #expect(
            report.convergence.map(\.fault) == [
                "network cut", "faults off", "server restart: ride kept", "sessions revoked: signed out", "signing in again",
            ])
        #expect(transcript.first?.contains("2 instances on PostgreSQL") == true, "\(transcript.first ?? "")")
    }

    /// 20 seeds by default, quick for a developer; `NIGHTRIDE_CHAOS_SEEDS` sets more (`.ci/run`
    /// says how many CI runs).
    /// How long a batch waits for its clients after faults stop: a hang guard for a loaded
    /// machine, not the product's target. The 2 s target is measured and printed
    /// (`convergence p50 … p99 …`), and judged by `nightride chaos` and the demo.
    static let window: Duration = .seconds(60)

    /// The outage the first batch of every chaos run meets, its clients acting through it: far
    /// longer than a mutation's retries once lasted (a few seconds), and than a push socket's
    /// and a pull's backoffs.
    static let outage: Duration = .seconds(30)

    @Test("seeded random scenarios: never an older screen, all converge after faults stop, no mutation lost or applied twice")
    func chaos() async throws {
        let count = seedCount("NIGHTRIDE_CHAOS_SEEDS", default: 20)
        let log = BatchLog()
        let outcomes = try await ChaosRun(seeds: Array(1...count), convergenceWindow: Self.window, longOutage: Self.outage, log: log.append).run()
        check(outcomes, count: count, log: log)
    }

    /// The server in a process of its own, killed with SIGKILL and started again on its file in
    /// every batch: 60 seeds (3 batches) by default, `NIGHTRIDE_PROCESS_CHAOS_SEEDS` for more.
    @Test(
        "seeded random scenarios against a server process killed with SIGKILL every batch: sessions kept, nothing lost or applied twice, all converge"
    )
    func chaosWithProcessKills() async throws {
        let count = seedCount("NIGHTRIDE_PROCESS_CHAOS_SEEDS", default: 60)
        let log = BatchLog()
        let run = ChaosRun(
            seeds: Array(5_001...(5_000 + count)), serverExecutable: try builtProduct(named: "nightride"), convergenceWindow: Self.window,
            longOutage: Self.outage, log: log.append
        )
        let outcomes = try await run.run()
        check(outcomes, count: count, log: log)
        let batches = log.lines.filter { $0.hasPrefix("batch of") }
        #expect(batches.count == Int((count + 19) / 20))
        #expect(batches.allSatisfy { $0.contains("server process killed and started again") }, "\(log.lines)")
    }

    /// Two server instances on one PostgreSQL database (a throwaway server the tests start),
    /// each scenario's passenger on one and its driver on the other, an instance restarted in
    /// turn: 20 seeds by default, `NIGHTRIDE_POSTGRES_CHAOS_SEEDS` for more.
    @Test(
        "seeded random scenarios across two instances on PostgreSQL: never an older screen, all converge, no mutation lost or applied twice",
        .enabled(if: ThrowawayPostgres.testsEnabled, "STATELOOP_POSTGRES_TESTS=0")
    )
    func chaosOnTwoInstances() async throws {
        guard let database = try await newPostgresDatabase() else { return }
        let count = seedCount("NIGHTRIDE_POSTGRES_CHAOS_SEEDS", default: 20)
        let log = BatchLog()
        let outcomes = try await ChaosRun(
            seeds: Array(9_001...(9_000 + count)), postgres: (database, 2), convergenceWindow: Self.window, longOutage: Self.outage, log: log.append
        ).run()
        check(outcomes, count: count, log: log)
        #expect(log.lines.filter { $0.hasPrefix("batch of") }.allSatisfy { $0.contains("on 2 instances") }, "\(log.lines)")
    }

    /// The demo's verdict without its latency bound: every step done, no screen invalid for the
    /// server's state, every fault converged. How long each took (the command's 2 s verdict) is
    /// printed, not judged: a loaded machine moves it.
    private func holds(_ report: DemoReport) -> Bool {
        let times = report.convergence.map { "\($0.fault) \($0.time)" }.joined(separator: ", ")
        print("demo seed \(report.seed) converged: \(times)")
        return report.failures.isEmpty && report.clients.allSatisfy(\.violations.isEmpty) && !report.convergence.isEmpty
    }

    /// How many seeds a chaos test runs: the environment's `variable`, else `fallback`.
    private func seedCount(_ variable: String, default fallback: UInt64) -> UInt64 {
        ProcessInfo.processInfo.environment[variable].flatMap(UInt64.init) ?? fallback
    }

    private func check(_ outcomes: [ChaosRun.Outcome], count: UInt64, log: BatchLog) {
        #expect(outcomes.count == Int(count))
        for outcome in outcomes {
            #expect(outcome.violations.isEmpty, "seed \(outcome.seed): \(outcome.violations)")
            #expect(outcome.mutationProblems.isEmpty, "seed \(outcome.seed): \(outcome.mutationProblems)")
            #expect(
                outcome.convergence != nil,
                "seed \(outcome.seed) never converged within \(Self.window); \(outcome.unconverged.joined(separator: "; ")); \(log.lines)"
            )
        }
        // The latency target (2 s) is measured, not asserted: a loaded machine moves it.
        let times = outcomes.compactMap(\.convergence).sorted()
        if !times.isEmpty {
            func percentile(_ fraction: Double) -> String {
                let time = times[min(times.count - 1, Int(Double(times.count) * fraction))].components
                return String(format: "%.0f ms", Double(time.seconds) * 1_000 + Double(time.attoseconds) / 1e15)
            }
            let late = times.filter { $0 > .seconds(2) }.count
            print("chaos convergence over \(times.count) seeds: p50 \(percentile(0.5)), p99 \(percentile(0.99)), \(late) above the 2 s target")
            for line in log.lines where line.hasPrefix("batch of") { print(line) }
            // What the slowest seeds' clients showed at the 2 s mark: where the time went.
            let slowest = outcomes.filter { ($0.convergence ?? .zero) > .seconds(2) }.sorted { $0.convergence! > $1.convergence! }
            for outcome in slowest.prefix(3) {
                print("seed \(outcome.seed) converged after \(outcome.convergence!); at 2 s: \(outcome.unconverged.joined(separator: "; "))")
            }
        }
        #expect(outcomes.map(\.screensShown).reduce(0, +) > outcomes.count * 4)
        #expect(outcomes.map(\.mutationsQueued).reduce(0, +) > outcomes.count * 2, "the mutation audit has mutations to check")
    }
}

/// The chaos run's batch lines, for the failure messages.
@MainActor
final class BatchLog {
    private(set) var lines: [String] = []

    func append(_ line: String) {
        lines.append(line)
    }
}
