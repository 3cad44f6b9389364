#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// The controlling terminal in full-screen mode: raw input (no echo, no line editing, no signal
/// keys), the alternate screen buffer, the cursor hidden, line wrapping off.
///
/// ``restore()`` puts everything back exactly as found; it is idempotent, and
/// ``TerminalClient`` calls it on every way out (quit, Ctrl-C, SIGTERM, a thrown error).
public final class Terminal {
    /// The file descriptor keys are read from.
    public let input: Int32
    /// The file descriptor the screen is written to.
    public let output: Int32
    private var original: termios?

    /// The terminal on `input` and `output` (standard input and output by default), untouched
    /// until ``enterFullScreen()``.
    public init(input: Int32 = STDIN_FILENO, output: Int32 = STDOUT_FILENO) {
        self.input = input
        self.output = output
    }

    /// Switches to raw mode and the alternate screen; returns whether this call did it (`false`
    /// when in full-screen mode already), so that only the caller who entered restores.
    ///
    /// - Throws: ``TerminalError`` when `input` is not a terminal.
    @discardableResult
    public func enterFullScreen() throws(TerminalError) -> Bool {
        guard original == nil else { return false }
        var settings = termios()
        guard isatty(input) == 1, tcgetattr(input, &settings) == 0 else {
            throw TerminalError(description: "standard input is not a terminal; run the client in a terminal")
        }
        original = settings
        var raw = settings
        // Keys arrive one by one and unechoed; Ctrl-C, Ctrl-Z, Ctrl-S and Ctrl-V reach the UI as
        // keys instead of acting on the process, so that quitting always goes through restore.
        raw.c_iflag &= ~tcflag_t(BRKINT | ICRNL | INPCK | ISTRIP | IXON)
        raw.c_cflag |= tcflag_t(CS8)
        raw.c_lflag &= ~tcflag_t(ECHO | ICANON | IEXTEN | ISIG)
        withUnsafeMutableBytes(of: &raw.c_cc) { cc in
            cc[Int(VMIN)] = 1
            cc[Int(VTIME)] = 0
        }
        guard tcsetattr(input, TCSAFLUSH, &raw) == 0 else {
            original = nil
            throw TerminalError(description: "cannot switch the terminal to raw mode")
        }
        // Alternate screen, cursor hidden, no autowrap (so the last column of the last row never
        // scrolls the screen), then clear.
        write("\u{1B}[?1049h\u{1B}[?25l\u{1B}[?7l\u{1B}[2J")
        return true
    }

    /// Leaves the alternate screen and restores the settings found. Does nothing when not in
    /// full-screen mode.
    public func restore() {
        guard var settings = original else { return }
        write("\u{1B}[0m\u{1B}[?7h\u{1B}[?25h\u{1B}[?1049l")
        _ = tcsetattr(input, TCSAFLUSH, &settings)
        original = nil
    }

    /// The size in columns and rows, asked anew on each call so that a resize is picked up by
    /// the next frame; 80×24 when the terminal does not say.
    public var size: (width: Int, height: Int) {
        var window = winsize()
        #if canImport(Darwin)
            let request: UInt = 0x4008_7468  // TIOCGWINSZ, a macro Swift cannot import on Darwin.
        #else
            let request = UInt(TIOCGWINSZ)
        #endif
        let result = withUnsafeMutablePointer(to: &window) { ioctl(output, request, $0) }
        guard result == 0, window.ws_col > 0, window.ws_row > 0 else { return (80, 24) }
        return (Int(window.ws_col), Int(window.ws_row))
    }

    /// Writes `text` entirely, retrying short writes and interruptions.
    public func write(_ text: String) {
        let bytes = Array(text.utf8)
        var offset = 0
        while offset < bytes.count {
            let written = bytes.withUnsafeBytes { buffer in
                #if canImport(Glibc)
                    Glibc.write(output, buffer.baseAddress! + offset, buffer.count - offset)
                #else
                    Darwin.write(output, buffer.baseAddress! + offset, buffer.count - offset)
                #endif
            }
            if written < 0 {
                if errno == EINTR || errno == EAGAIN { continue }
                return
            }
            offset += written
        }
    }
}

/// The terminal cannot be used for the full-screen UI.
public struct TerminalError: Error, CustomStringConvertible {
    /// What went wrong, for the user.
    public let description: String
}
