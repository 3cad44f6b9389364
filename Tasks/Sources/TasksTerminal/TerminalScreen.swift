import Synchronization

/// What is on the terminal: the last state shown, drawn again on a resize.
final class TerminalScreen: Sendable {
    let terminal: RawTerminal
    /// The state drawn last; locked over each draw, so that a resize and a new state never
    /// write at once.
    private let shown = Mutex<BoardState?>(nil)

    init(terminal: RawTerminal) {
        self.terminal = terminal
    }

    func show(_ state: BoardState) {
        shown.withLock { shown in
            shown = state
            draw(state)
        }
    }

    func redraw() {
        shown.withLock { shown in
            if let shown { draw(shown) }
        }
    }

    private func draw(_ state: BoardState) {
        let (width, height) = terminal.size
        let frame = BoardRenderer.render(state, width: width, height: height)
        // Home, each line then the rest of it cleared, the rest of the screen cleared; the
        // cursor where the frame wants it, or hidden.
        var text = "\u{1B}[?25l\u{1B}[H" + frame.lines.joined(separator: "\u{1B}[K\r\n") + "\u{1B}[K\u{1B}[J"
        if let cursor = frame.cursor {
            text += "\u{1B}[\(cursor.row + 1);\(cursor.column + 1)H\u{1B}[?25h"
        }
        terminal.write(text)
    }
}
