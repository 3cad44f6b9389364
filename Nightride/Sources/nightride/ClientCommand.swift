import ArgumentParser
import Foundation
import NightrideClient
import NightrideModel
import NightrideTUI
import StateLoopInspector
import StateLoopSync

/// `nightride client`: the full-screen terminal client of one user.
struct ClientCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "client",
        abstract: "Run the keyboard-driven terminal client as one user.",
        discussion: """
            A login screen asks for a name and a password (Tab between the fields, Enter to sign in, \
            Esc to leave); a new name creates an account with that password. --user fills in the name; \
            with the password in the environment too (NIGHTRIDE_PASSWORD), the client signs in without \
            the screen. A password is never a flag: every user of the machine could read it (ps). \
            Keys: type a destination in the "Where to?" box, ↑↓ to choose, Enter to request; Tab \
            leaves the box for the command keys: d driver mode, r refresh, c cancel, a accept, \
            v arrived, f finish the ride, s finish the survey, h history, q quit. Ctrl-C quits from anywhere.
            """
    )

    @Option(help: ArgumentHelp("The server's address.", valueName: "url"))
    var server: String

    @Option(
        help: ArgumentHelp(
            "The user to log in as (created on first login): the login screen asks for the password, unless NIGHTRIDE_PASSWORD holds it.",
            valueName: "name"))
    var user: String?

    @Option(
        help: ArgumentHelp(
            "The client's journal, so that a relaunch shows the last screen at once (default: <user>@<host>-<port>.journal in $XDG_DATA_HOME/nightride, else ~/.local/share/nightride).",
            valueName: "path"
        ))
    var journal: String?

    @Option(
        help: ArgumentHelp(
            "Send what the client does to a StateLoop inspector (the apps address `swift run stateloop-inspector` prints).",
            valueName: "ws-url"
        ))
    var inspect: String?

    func validate() throws {
        if let inspect {
            try Self.validateInspectorURL(inspect)
        }
        guard let url = URL(string: server), url.scheme == "http" || url.scheme == "https", url.host != nil else {
            throw ValidationError("--server must be an http(s) address, such as http://127.0.0.1:8080")
        }
        if let user, user.trimmingCharacters(in: .whitespaces).isEmpty {
            throw ValidationError("--user must not be empty; leave it out to get the login screen")
        }
    }

    /// The password of `--user` from the environment: the variable's name.
    static let passwordVariable = "NIGHTRIDE_PASSWORD"

    func run() async throws {
        // The terminal is the screen: the log goes to a file, before any logger is made.
        ClientLog.bootstrap(path: journal.map { $0 + ".log" } ?? DataFolder.path() + "/client.log")
        // Validated above.
        let url = URL(string: server)!
        let inspector = inspect.map { Inspector.nightride(connectingTo: $0) }
        defer { inspector?.disconnect() }
        if let user, let password = ProcessInfo.processInfo.environment[Self.passwordVariable] {
            let api: NightrideAPI
            do {
                // Logged in before the terminal is taken over, so that a failure prints as usual.
                api = try await NightrideAPI.login(server: url, name: user, password: password)
            } catch let error as HTTPStatusError where error.status == 401 {
                throw LoginFailure(description: "cannot log in to \(server) as \(user): \(LoginState.wrongPassword) (\(Self.passwordVariable))")
            } catch {
                throw LoginFailure(description: "cannot log in to \(server) as \(user): \(NightrideAPI.message(for: error))")
            }
            try await Self.runUI(api: api, journalPath: journal, inspector: inspector)
        } else {
            try await Self.runUI(server: url, username: user, journalPath: journal, inspector: inspector)
        }
    }

    /// The login screen, then the client, in one full-screen session (no flash of the shell in
    /// between). Leaving the login screen ends the command quietly.
    @MainActor
    private static func runUI(server: URL, username: String?, journalPath: String?, inspector: Inspector?) async throws {
        let terminal = Terminal()
        try terminal.enterFullScreen()
        defer { terminal.restore() }
        guard let api = try await LoginScreen(server: server, terminal: terminal, username: username).run() else { return }
        try await runUI(api: api, journalPath: journalPath, inspector: inspector, terminal: terminal)
    }

    /// The client and its UI live on the main actor, as `NightrideClient` requires. When the
    /// server signs the user out (it restarted, forgot or expired the session), the login
    /// screen comes back with the name filled in, and a client with the new session takes over
    /// the same journal: the pending changes are sent then, once, with their original ids.
    @MainActor
    private static func runUI(api: NightrideAPI, journalPath: String?, inspector: Inspector?, terminal: Terminal = Terminal()) async throws {
        var api = api
        let entered = try terminal.enterFullScreen()
        defer { if entered { terminal.restore() } }
        while true {
            let path = try journalPath ?? JournalLocation.journalPath(user: api.user, server: api.server)
            let client = try NightrideClient(api: api, options: ClientOptions(journalPath: path, inspector: inspector))
            let exit = try await TerminalClient(client: client, terminal: terminal).run()
            client.stop()
            guard exit == .signedOut else { return }
            let login = LoginScreen(server: api.server, terminal: terminal, username: api.user, notice: "Signed out: sign in again")
            guard let renewed = try await login.run() else { return }
            api = renewed
        }
    }
}

extension ParsableCommand {
    /// Throws unless `url` is a WebSocket address, as `--inspect` takes.
    static func validateInspectorURL(_ url: String) throws {
        guard let parsed = URL(string: url), parsed.scheme == "ws" || parsed.scheme == "wss", parsed.host != nil else {
            throw ValidationError("--inspect takes the apps address `swift run stateloop-inspector` prints, such as ws://127.0.0.1:7357/app?token=…")
        }
    }
}

/// The login was refused or the server could not be reached.
private struct LoginFailure: Error, CustomStringConvertible {
    let description: String
}
