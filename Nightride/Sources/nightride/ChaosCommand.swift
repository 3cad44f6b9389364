import ArgumentParser
import Foundation
import NightrideDemo
import NightrideServer

/// `nightride chaos`: seeded random scenarios against a faulty server, with the invariant checked.
struct ChaosCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "chaos",
        abstract:
            "Run seeded random scenarios against a server with faults; check that no client shows an invalid or older screen, that all converge within 2 s after faults stop, and that no mutation is lost or applied twice."
    )

    @Option(help: ArgumentHelp("How many seeds to run.", valueName: "n"))
    var seeds = 200

    @Option(help: ArgumentHelp("The first seed.", valueName: "n"))
    var first: UInt64 = 1

    @Flag(
        name: .customLong("server-process"),
        help:
            "Run the server in a process of its own (this program's `server --control`), killed with SIGKILL and started again on its data file in every batch."
    )
    var serverProcess = false

    @Option(
        help: ArgumentHelp(
            "Run the servers on this PostgreSQL database (postgres://user@host:port/database), several instances of them: each scenario's passenger and driver on different instances.",
            valueName: "url"))
    var postgres: String?

    @Option(help: ArgumentHelp("How many server instances to run on the --postgres database.", valueName: "n"))
    var instances = 2

    func validate() throws {
        guard seeds > 0 else { throw ValidationError("--seeds must be at least 1") }
        if postgres != nil && serverProcess {
            throw ValidationError("--postgres runs its instances in this process: it goes without --server-process")
        }
        guard (1...8).contains(instances) else { throw ValidationError("--instances must be 1 to 8") }
        #if !PostgreSQL
            if postgres != nil { throw ValidationError(NightrideServer.builtWithoutPostgreSQL) }
        #endif
    }

    @MainActor
    func run() async throws {
        let executable = serverProcess ? Bundle.main.executableURL : nil
        if serverProcess && executable == nil {
            throw ValidationError("--server-process: cannot find this program's own executable to start the server with")
        }
        let run = ChaosRun(
            seeds: Array(first..<(first + UInt64(seeds))), serverExecutable: executable, postgres: postgres.map { ($0, instances) }, log: say
        )
        let outcomes = try await run.run()
        let failed = outcomes.filter { !$0.passed(within: DemoReport.convergenceBound) }
        for outcome in failed {
            print(
                "seed \(outcome.seed): \(outcome.violations.map(\.description)) convergence \(outcome.convergence.map(String.init(describing:)) ?? "never") \(outcome.mutationProblems)"
            )
            for line in outcome.unconverged {
                print("  \(line)")
            }
        }
        print("\(outcomes.count) scenarios, \(outcomes.map(\.screensShown).reduce(0, +)) screens, \(failed.count) failed")
        if !failed.isEmpty {
            throw ExitCode.failure
        }
    }
}
