import ArgumentParser
import Foundation
import Logging
import StateLoopServer
import TasksClient
import TasksDemo
import TasksServer
import TasksTerminal

/// `tasks`: the Tasks app's server, its terminal client and its demo.
@main
struct Tasks: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "A team task board on StateLoop's collections.",
        subcommands: [Demo.self, Server.self, Client.self],
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

        @Option(
            name: .customLong("member"),
            help: "Puts a user in a project at start, as user:project or user:project:name (repeat it for more); kept in --data.")
        var members: [String] = []

        /// The memberships of `--member`, each as user, project and project name.
        private var memberships: [(user: String, project: String, name: String)] {
            members.compactMap { member in
                let parts = member.split(separator: ":", maxSplits: 2, omittingEmptySubsequences: false).map(String.init)
                guard parts.count >= 2, !parts[0].isEmpty, !parts[1].isEmpty else { return nil }
                return (parts[0], parts[1], parts.count == 3 && !parts[2].isEmpty ? parts[2] : parts[1])
            }
        }

        func validate() throws {
            if memberships.count != members.count {
                throw ValidationError("--member is user:project or user:project:name")
            }
        }

        func run() async throws {
            let store = try data.map { try SQLiteStore(path: $0) } ?? SQLiteStore()
            let server = TasksServer(store: store)
            // With no way to make projects in the app, this is how a server gets its first ones.
            for member in memberships {
                try await server.add(member.user, to: member.project, named: member.name)
            }
            let host = SyncHost(port: port) { port in .init(server.sync, application: server.application(port: port)) }
            let bound = try await host.start()
            print("tasks server on http://127.0.0.1:\(bound) (Ctrl-C stops it)")
            while true { try await Task.sleep(for: .seconds(3_600)) }
        }
    }

    /// `tasks client`: one user's board, full-screen in the terminal.
    struct Client: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Opens a user's task board, full-screen in the terminal (it needs one: not for pipes).")

        @Option(help: "The server's address.")
        var server: String = "http://127.0.0.1:8090"

        @Option(help: "Who to sign in as: 1 to 32 letters or digits.")
        var name: String

        @Option(help: "The device's store, a SQLite file kept between runs (pending changes included); in memory when left out.")
        var store: String?

        func run() async throws {
            // First: without a screen there is nothing to sign in for.
            guard TerminalHost.isInteractive else { throw Self.fail(TerminalUnavailable().description) }
            guard let url = URL(string: server), url.scheme == "http" || url.scheme == "https", url.host != nil else {
                throw ValidationError("--server is an http(s) address, such as http://127.0.0.1:8090")
            }
            let session: TasksSessionAnswer
            do {
                session = try await TasksClient.signIn(server: url, name: name)
            } catch {
                throw Self.fail("cannot sign in as \(name) at \(server): \(error)")
            }
            // The library's logs would be written over the screen.
            let quiet = Logger(label: "tasks.client") { _ in SwiftLogNoOpLogHandler() }
            let client: TasksClient
            do {
                client = try TasksClient(server: url, session: session, storePath: store, logger: quiet)
            } catch {
                throw Self.fail("cannot open the store \(store ?? "in memory"): \(error)")
            }
            client.start()
            do {
                try await TerminalHost.run(BoardSession(client: client))
            } catch {
                try? client.close()
                throw Self.fail(error.description)
            }
            try client.close()
        }

        /// Says `message` on standard error; the failure to throw.
        private static func fail(_ message: String) -> ExitCode {
            FileHandle.standardError.write(Data("tasks client: \(message)\n".utf8))
            return .failure
        }
    }
}
