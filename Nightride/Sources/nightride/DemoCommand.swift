import ArgumentParser
import Foundation
import NightrideClient
import NightrideDemo
import NightrideServer
import StateLoopInspector
import Synchronization

/// `nightride demo`: the scripted scenario with faults, its transcript and its verdict.
struct DemoCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "demo",
        abstract: "Run a server with seeded faults and two clients through a scripted ride; print every screen and a verdict.",
        discussion: "Exits 0 when no client showed a screen invalid for the server's state and every client converged within 2 s after each fault."
    )

    @Option(name: .customLong("seed"), help: ArgumentHelp("The seed of the injected faults.", valueName: "n"))
    var seed: UInt64 = 7

    @Option(
        help: ArgumentHelp(
            "Run the server on this PostgreSQL database (postgres://user@host:port/database), as several instances: the passenger on one, the driver on another.",
            valueName: "url"))
    var postgres: String?

    @Option(help: ArgumentHelp("How many server instances to run on the --postgres database.", valueName: "n"))
    var instances = 2

    @Option(
        help: ArgumentHelp(
            "Send what every client and server instance does to a StateLoop inspector (the apps address `swift run stateloop-inspector` prints).",
            valueName: "ws-url"
        ))
    var inspect: String?

    func validate() throws {
        guard (1...8).contains(instances) else { throw ValidationError("--instances must be 1 to 8") }
        if let inspect { try Self.validateInspectorURL(inspect) }
        #if !PostgreSQL
            if postgres != nil { throw ValidationError(NightrideServer.builtWithoutPostgreSQL) }
        #endif
    }

    @MainActor
    func run() async throws {
        var options = DemoScenario.Options(seed: seed, postgresURL: postgres, instances: instances)
        options.inspector = inspect.map { Inspector.nightride(connectingTo: $0) }
        let servers = Mutex<[Inspector]>([])
        if let inspect {
            let several = options.instances > 1
            options.serverInspector = { index in
                let inspector = Inspector.nightrideServer(instance: several ? index : nil, connectingTo: inspect)
                servers.withLock { $0.append(inspector) }
                return inspector
            }
        }
        let scenario = DemoScenario(options: options, log: say)
        let report = try await scenario.run()
        if let inspector = options.inspector {
            // What the last steps recorded reaches the inspector before the process ends.
            try? await Task.sleep(for: .milliseconds(500))
            inspector.disconnect()
            for server in servers.withLock({ $0 }) { server.disconnect() }
        }
        print(report.table)
        if !report.passed {
            throw ExitCode.failure
        }
    }
}
