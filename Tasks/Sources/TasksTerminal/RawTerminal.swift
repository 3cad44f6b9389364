import Synchronization

#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// The process's terminal taken over for the full-screen client: keys unbuffered and unechoed,
/// the alternate screen, no autowrap; ``restore()`` gives it back as found.
///
/// Restoring is what matters most: a client that leaves the terminal raw leaves the user a
/// shell that echoes nothing. So it is done by ``restore()`` on every way out the host takes,
/// and, should the process crash, by a handler of the fatal signals (see ``CrashGuard``).
final class RawTerminal: Sendable {
    let input: Int32
    let output: Int32
    /// The settings found, while the terminal is taken over.
    private let saved = Mutex<termios?>(nil)

    /// Takes over the terminal on `input` and `output`.
    ///
    /// - Throws: ``TerminalUnavailable`` when either is not a terminal.
    init(input: Int32 = STDIN_FILENO, output: Int32 = STDOUT_FILENO) throws(TerminalUnavailable) {
        self.input = input
        self.output = output
        var settings = termios()
        guard isatty(input) == 1, isatty(output) == 1, tcgetattr(input, &settings) == 0 else { throw TerminalUnavailable() }
        var raw = settings
        // The C library's raw mode: keys one at a time, unechoed and untranslated, output not
        // post-processed (frames end their lines in CR LF themselves); and no signal keys, so
        // Ctrl-C and Ctrl-Z arrive as keys and quitting always goes through the way out that
        // restores. A read returns as soon as one byte is there.
        cfmakeraw(&raw)
        withUnsafeMutableBytes(of: &raw.c_cc) { characters in
            characters[Int(VTIME)] = 0
            characters[Int(VMIN)] = 1
        }
        guard tcsetattr(input, TCSAFLUSH, &raw) == 0 else { throw TerminalUnavailable(reason: "cannot switch the terminal to raw mode") }
        saved.withLock { $0 = settings }
        CrashGuard.arm(input: input, output: output, settings: settings)
        // The alternate screen, autowrap off (a full last column never scrolls), cleared.
        write("\u{1B}[?1049h\u{1B}[?7l\u{1B}[2J")
    }

    /// Gives the terminal back: the main screen, the cursor shown, the settings found. Only the
    /// first call does anything.
    func restore() {
        guard
            var settings = saved.withLock({ state in
                defer { state = nil }
                return state
            })
        else { return }
        write(Self.leave)
        _ = tcsetattr(input, TCSAFLUSH, &settings)
        CrashGuard.disarm()
    }

    /// What undoes the screen modes entered.
    static let leave = "\u{1B}[?25h\u{1B}[?7h\u{1B}[0m\u{1B}[?1049l"

    /// The size in cells, asked each time (a resize shows in the next frame); 80×24 when the
    /// terminal does not say.
    var size: (width: Int, height: Int) {
        #if canImport(Darwin)
            // TIOCGWINSZ is a macro Swift does not import on Darwin: its value.
            let askSize = UInt(0x4008_7468)
        #else
            let askSize = UInt(TIOCGWINSZ)
        #endif
        var window = winsize()
        let answered = ioctl(output, askSize, &window) == 0
        return answered && window.ws_col > 0 && window.ws_row > 0 ? (Int(window.ws_col), Int(window.ws_row)) : (80, 24)
    }

    /// Writes all of `text`, through short writes and interruptions.
    func write(_ text: String) {
        Self.write(text, to: output)
    }

    static func write(_ text: String, to descriptor: Int32) {
        var bytes = Array(text.utf8)[...]
        while !bytes.isEmpty {
            let count = bytes.withUnsafeBytes { buffer in
                #if canImport(Glibc)
                    Glibc.write(descriptor, buffer.baseAddress, buffer.count)
                #else
                    Darwin.write(descriptor, buffer.baseAddress, buffer.count)
                #endif
            }
            if count < 0 {
                if errno == EINTR || errno == EAGAIN { continue }
                return
            }
            bytes = bytes.dropFirst(count)
        }
    }
}

/// The full-screen client needs a terminal and has none.
public struct TerminalUnavailable: Error, CustomStringConvertible {
    /// What is wrong, for the user.
    public var description: String

    /// The error, with why.
    public init(reason: String = "standard input and output must be a terminal (the client is full-screen): run it in one, not through a pipe") {
        description = reason
    }
}
