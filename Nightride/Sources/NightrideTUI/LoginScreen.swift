import Foundation
import NightrideClient
import StateLoopViewModel

/// The full-screen login of the terminal client: the ``Login`` view model (Nightride's rules
/// and outputs) against a Nightride server, drawn with ``renderLogin(_:_:isLoading:server:width:height:)``
/// and driven through ``LoginKeyMap``.
///
/// ```swift
/// guard let api = try await LoginScreen(server: url).run() else { return }  // nil: the user left
/// let client = try NightrideClient(api: api, options: ClientOptions(journalPath: path))
/// ```
///
/// Ownership and threading: the screen, its view model and its form live on the main actor. The
/// view model's outputs are watched by tasks on the main actor too, which redraw and wake the
/// loop; they end with ``run()``.
@MainActor
public final class LoginScreen {
    /// The server logged in to.
    public let server: URL
    private let terminal: Terminal
    private let viewModel: ViewModel<Login>
    private var form = LoginForm()
    private let frames: FrameWriter
    /// The server as the title bar shows it.
    private let serverName: String

    /// A login screen for `server`, with `service` (Nightride's `POST /login` by default), on
    /// `terminal` (the process's own by default).
    ///
    /// - Parameters:
    ///   - username: Fills the name in, with the password focused (signing in again).
    ///   - notice: A line shown until the first attempt ("Signed out: sign in again").
    public init(
        server: URL,
        service: LoginService? = nil,
        terminal: Terminal = Terminal(),
        username: String? = nil,
        notice: String? = nil
    ) {
        self.server = server
        self.terminal = terminal
        frames = FrameWriter(terminal: terminal)
        serverName = server.host.map { host in server.port.map { "\(host):\($0)" } ?? host } ?? server.absoluteString
        viewModel = ViewModel(Login(service: service ?? .nightride(server: server)))
        form.error = notice
        if let username {
            viewModel.execute(.setUsername(username))
            form.focus = .password
        }
    }

    /// Shows the form until the user signs in (the API as that user) or leaves (`nil`: Esc,
    /// Ctrl-C, a stop signal, the input closing). Restores the terminal on the way out unless
    /// it was in full screen already, so that the caller can keep it for the next screen.
    ///
    /// - Throws: ``TerminalError`` when there is no terminal to take over.
    public func run() async throws(TerminalError) -> NightrideAPI? {
        let entered = try terminal.enterFullScreen()
        defer { if entered { terminal.restore() } }
        let inputs = TerminalInputs(terminal: terminal)
        defer { inputs.stop() }

        let wake = inputs.continuation
        let (states, loading, errors) = (viewModel.states, viewModel.loading, viewModel.errors)
        let watchers = [
            Task { for await _ in states { wake.yield(.changed) } },
            Task { for await _ in loading { wake.yield(.changed) } },
            Task { [weak self] in
                for await error in errors {
                    self?.form.error = (error as? LoginProblem)?.description ?? "\(error)"
                    wake.yield(.changed)
                }
            },
        ]
        defer { for watcher in watchers { watcher.cancel() } }

        draw()
        for await input in inputs.stream {
            switch input {
            case .keys(let keys):
                for key in keys where handle(key) == .quit {
                    return nil
                }
            case .resize, .changed:
                break
            case .interrupted, .inputClosed:
                return nil
            }
            if let token = viewModel.state.token {
                return NightrideAPI(server: server, user: viewModel.state.username, token: token)
            }
            draw()
        }
        return nil
    }

    private enum Outcome { case goOn, quit }

    private func handle(_ key: Key) -> Outcome {
        let (newForm, commands) = LoginKeyMap.handle(key, state: viewModel.state, form: form, isLoading: viewModel.isLoading)
        form = newForm
        for command in commands {
            switch command {
            case .execute(let action):
                viewModel.execute(action)
            case .quit:
                return .quit
            case .redraw:
                frames.clear()
            }
        }
        return .goOn
    }

    private func draw() {
        let (width, height) = terminal.size
        frames.show(renderLogin(viewModel.state, form, isLoading: viewModel.isLoading, server: serverName, width: width, height: height))
    }
}
