#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// The thin part of the terminal client, tested on a pseudo-terminal: it takes over the
/// terminal, reads keys into a ``BoardSession``, draws each state it hands back with
/// ``BoardRenderer`` at the terminal's size, and gives the terminal back on every way out.
///
/// ```sh
/// tasks client --server http://127.0.0.1:8090 --name ann
/// ```
public enum TerminalHost {
    /// Whether standard input and output are a terminal: the client cannot run otherwise.
    public static var isInteractive: Bool {
        isatty(STDIN_FILENO) == 1 && isatty(STDOUT_FILENO) == 1
    }

    /// Runs `session` full-screen until the user quits, the input closes, or SIGINT, SIGTERM
    /// or SIGHUP comes; the terminal is given back in every case. The session's last state.
    ///
    /// - Throws: ``TerminalUnavailable`` without a terminal (checked before anything changes).
    @discardableResult
    public static func run(_ session: BoardSession) async throws(TerminalUnavailable) -> BoardState {
        let terminal = try RawTerminal()
        defer { terminal.restore() }
        let screen = TerminalScreen(terminal: terminal)
        let signals = SignalWatch { number in
            if number == SIGWINCH {
                screen.redraw()
            } else {
                session.send(.stop)
            }
        }
        defer { signals.cancel() }
        let reader = KeyReader(input: terminal.input)
        reader.start(keys: { keys in for key in keys { session.send(.key(key)) } }, closed: { session.send(.stop) })
        defer { reader.stop() }
        return await session.run { state in screen.show(state) }
    }
}
