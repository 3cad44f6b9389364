import ArgumentParser
import Foundation
import Logging
import StateLoopServer
import TasksDemo
import TasksServer

/// `tasks`: the Tasks app's server and its demo.
@main
struct Tasks: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "A team task board on StateLoop's collections.",
        subcommands: [Demo.self, Server.self],
        defaultSubcommand: Demo.self
    )

    /// `tasks demo`: three devices, one server, seeded faults, and a verdict.
    struct Demo: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Runs three users' devices against a server with seeded faults, and says whether they converged.")

        @Option(help: "The seed of the users' changes and of the faults.")
        var seed: UInt64 = 1

        @Option(help: "How many steps: changes, and one fault every eight steps.")
        var steps: Int = 60

        func run() async throws {
            let verdict = try await TasksDemo(plan: .init(seed: seed, steps: steps)).run { print("  \($0)") }
            print(verdict)
            if !verdict.passed { throw ExitCode.failure }
        }
    }

    /// `tasks server`: the backend on a SQLite file (or in memory).
    struct Server: AsyncParsableCommand {
        static let configuration = CommandConfiguration(abstract: "Serves the task boards.")

        @Option(help: "The port to listen on (127.0.0.1); 0 picks a free one.")
        var port: Int = 8090

        @Option(help: "The SQLite file of the server's data; in memory when left out.")
        var data: String?

        func run() async throws {
            let store = try data.map { try SQLiteStore(path: $0) } ?? SQLiteStore()
            let server = TasksServer(store: store)
            let host = SyncHost(port: port) { port in .init(server.sync, application: server.application(port: port)) }
            let bound = try await host.start()
            print("tasks server on http://127.0.0.1:\(bound) (Ctrl-C stops it)")
            while true { try await Task.sleep(for: .seconds(3_600)) }
        }
    }
}
