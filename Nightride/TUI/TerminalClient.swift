import NightrideClient
import StateLoop

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// The full-screen terminal front end of a ``NightrideClient``: draws ``render(_:_:width:height:)``
/// on every state change and turns keys into ``UserAction``s through ``KeyMap``.
///
/// ```swift
/// let client = try NightrideClient(api: api, options: ClientOptions(journalPath: path))
/// try await TerminalClient(client: client).run()   // returns when the user quits
/// client.stop()
/// ```
@MainActor
public final class TerminalClient {
    /// The client shown and driven.
    public let client: NightrideClient
    private let terminal: Terminal
    private var view = ViewState()
    private var shownScreen: Screen
    private var lastFrame: [String] = []

    /// A UI for `client` on `terminal` (the process's own terminal by default).
    public init(client: NightrideClient, terminal: Terminal = Terminal()) {
        self.client = client
        self.terminal = terminal
        shownScreen = client.state.screen
    }

    /// Takes over the terminal until the user quits (q, Ctrl-C), the process is asked to stop
    /// (SIGINT, SIGTERM, SIGHUP) or the input closes; the terminal is restored in every case
    /// (unless it was in full screen already, as after the login screen: then its owner
    /// restores it).
    ///
    /// - Throws: ``TerminalError`` when there is no terminal to take over.
    public func run() async throws(TerminalError) {
        let entered = try terminal.enterFullScreen()
        defer { if entered { terminal.restore() } }

        let inputs = TerminalInputs(terminal: terminal)
        defer { inputs.stop() }

        let subscription = client.system.observe { [weak self] state in
            self?.stateChanged(state)
        }
        defer { subscription.cancel() }

        loop: for await input in inputs.stream {
            switch input {
            case .keys(let keys):
                for key in keys {
                    if handle(key) == .quit { break loop }
                }
                // Once per batch of keys (a paste is one batch): the view may have changed
                // without the state changing.
                draw()
            case .resize, .changed:
                draw()
            case .interrupted, .inputClosed:
                break loop
            }
        }
    }

    private enum Outcome { case goOn, quit }

    private func handle(_ key: Key) -> Outcome {
        let (newView, commands) = KeyMap.handle(key, state: client.state, view: view)
        view = newView
        for command in commands {
            switch command {
            case .perform(let action):
                client.perform(action)
            case .quit:
                return .quit
            case .redraw:
                lastFrame = []
                terminal.write("\u{1B}[2J")
            }
        }
        return .goOn
    }

    private func stateChanged(_ state: ClientState) {
        view.screenChanged(from: shownScreen, to: state.screen)
        shownScreen = state.screen
        draw()
    }

    /// Draws the frame for the current state and size, unless it is the one on screen already
    /// (a batch of keys and the state changes it causes both ask for a frame).
    private func draw() {
        let (width, height) = terminal.size
        let lines = render(client.state, view, width: width, height: height)
        guard lines != lastFrame else { return }
        lastFrame = lines
        terminal.write(Self.frame(lines))
    }

    /// The bytes of a whole frame: each line at its row, the title bar and the key bar in
    /// reverse video. Written in one go so that the terminal never shows half a frame.
    static func frame(_ lines: [String]) -> String {
        var output = ""
        for (row, line) in lines.enumerated() {
            output += "\u{1B}[\(row + 1);1H"
            let highlighted = row == 0 || row == lines.count - 1
            output += highlighted ? "\u{1B}[7m" + line + "\u{1B}[0m" : line
        }
        return output
    }
}
