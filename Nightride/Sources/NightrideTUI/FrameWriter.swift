/// Writes whole frames to a terminal, skipping a frame identical to the one on screen (a batch
/// of keys and the state changes it causes both ask for one).
///
/// Ownership: one per screen loop, used on that loop's actor only.
final class FrameWriter {
    private let terminal: Terminal
    private var shown: [String] = []

    init(terminal: Terminal) {
        self.terminal = terminal
    }

    /// Shows `lines` (the title bar and the key bar, first and last, in reverse video), unless
    /// they are on screen already.
    func show(_ lines: [String]) {
        guard lines != shown else { return }
        shown = lines
        terminal.write(Self.frame(lines))
    }

    /// Clears the terminal and forgets the frame shown, so that the next one is written whole
    /// (Ctrl-L, after garbage on the screen).
    func clear() {
        shown = []
        terminal.write("\u{1B}[2J")
    }

    /// The bytes of a whole frame: each line at its row. Written in one go so that the terminal
    /// never shows half a frame.
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
