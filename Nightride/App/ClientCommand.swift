import ArgumentParser
import Foundation
import NightrideClient
import NightrideTUI

/// `nightride client`: the full-screen terminal client of one user.
struct ClientCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "client",
        abstract: "Run the keyboard-driven terminal client as one user.",
        discussion: """
        Keys: type a destination in the "Where to?" box, ↑↓ to choose, Enter to request; Tab \
        leaves the box for the command keys: d driver mode, r refresh, c cancel, a accept, \
        v arrived, f finish the ride, s finish the survey, h history, q quit. Ctrl-C quits from anywhere.
        """
    )

    @Option(help: ArgumentHelp("The server's address.", valueName: "url"))
    var server: String

    @Option(help: ArgumentHelp("The user to log in as (created on first login).", valueName: "name"))
    var user: String

    @Option(help: ArgumentHelp("The client's journal, so that a relaunch shows the last screen at once (default: ./nightride-<user>.journal).", valueName: "path"))
    var journal: String?

    func validate() throws {
        guard let url = URL(string: server), url.scheme == "http" || url.scheme == "https", url.host != nil else {
            throw ValidationError("--server must be an http(s) address, such as http://127.0.0.1:8080")
        }
        guard !user.trimmingCharacters(in: .whitespaces).isEmpty else {
            throw ValidationError("--user must not be empty")
        }
    }

    func run() async throws {
        // Validated above.
        let url = URL(string: server)!
        let api: NightrideAPI
        do {
            // Logged in before the terminal is taken over, so that a failure prints as usual.
            api = try await NightrideAPI.login(server: url, name: user)
        } catch {
            // A transport error's description is a dump of its user info; its message is enough.
            let reason = (error as NSError).domain == NSURLErrorDomain ? error.localizedDescription : "\(error)"
            throw LoginFailure(description: "cannot log in to \(server) as \(user): \(reason)")
        }
        try await Self.runUI(api: api, journalPath: journal ?? "./nightride-\(user).journal")
    }

    /// The client and its UI live on the main actor, as `NightrideClient` requires.
    @MainActor
    private static func runUI(api: NightrideAPI, journalPath: String) async throws {
        let client = try NightrideClient(api: api, options: ClientOptions(journalPath: journalPath))
        defer { client.stop() }
        try await TerminalClient(client: client).run()
    }
}

/// The login was refused or the server could not be reached.
private struct LoginFailure: Error, CustomStringConvertible {
    let description: String
}
