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
    /// The past state an inspector shows, while it does (``System/showPreview(_:)``).
    private var previewState: ClientState?
    private let frames: FrameWriter
    /// Set while a batch of keys is handled: the state changes it causes wait for the one draw
    /// after the batch.
    private var handlingKeys = false
    /// Wakes the input loop when the state asks for something other than a draw (signed out).
    private var wake: AsyncStream<TerminalInput>.Continuation?

    /// Why ``run()`` returned.
    public enum Exit: Sendable, Equatable {
        /// The user quit, the process was asked to stop, or the input closed.
        case quit
        /// The server no longer accepts the session: show the login screen, then run a client
        /// with the new session on the same journal.
        case signedOut
    }

    /// A UI for `client` on `terminal` (the process's own terminal by default).
    public init(client: NightrideClient, terminal: Terminal = Terminal()) {
        self.client = client
        self.terminal = terminal
        frames = FrameWriter(terminal: terminal)
        shownScreen = client.state.screen
    }

    /// Takes over the terminal until the user quits (q, Ctrl-C), the process is asked to stop
    /// (SIGINT, SIGTERM, SIGHUP), the input closes or the server signs the user out; the
    /// terminal is restored in every case (unless it was in full screen already, as after the
    /// login screen: then its owner restores it).
    ///
    /// - Throws: ``TerminalError`` when there is no terminal to take over.
    @discardableResult
    public func run() async throws(TerminalError) -> Exit {
        let entered = try terminal.enterFullScreen()
        defer { if entered { terminal.restore() } }

        let inputs = TerminalInputs(terminal: terminal)
        defer { inputs.stop() }
        wake = inputs.continuation
        defer { wake = nil }
        if client.state.isSignedOut { return .signedOut }

        let subscription = client.system.observe { [weak self] state in
            self?.stateChanged(state)
        }
        defer { subscription.cancel() }

        for await input in inputs.stream {
            switch input {
            case .keys(let keys):
                handlingKeys = true
                for key in keys where handle(key) == .quit {
                    return .quit
                }
                handlingKeys = false
                // Once per batch of keys (a paste is one batch): the view may have changed
                // without the state changing.
                draw()
            case .resize, .changed:
                draw()
            case .interrupted, .inputClosed:
                return .quit
            }
            if client.state.isSignedOut { return .signedOut }
        }
        return .quit
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
                frames.clear()
            }
        }
        return .goOn
    }

    private func stateChanged(_ state: ClientState) {
        // An observer is shown the preview in place of the live state while there is one.
        previewState = client.system.isPreviewing ? state : nil
        view.screenChanged(from: shownScreen, to: state.screen)
        shownScreen = state.screen
        if state.isSignedOut {
            wake?.yield(.changed)
        } else if !handlingKeys {
            draw()
        }
    }

    /// Draws the frame for the current state and size: the live state, or the past state an
    /// inspector asked to preview, under a banner (keys still act on the live state).
    private func draw() {
        let (width, height) = terminal.size
        let previewing = client.system.isPreviewing
        frames.show(render(previewing ? previewState ?? client.state : client.state, view, width: width, height: height, preview: previewing))
    }
}
