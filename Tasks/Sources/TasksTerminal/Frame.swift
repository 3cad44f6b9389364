/// One screenful, as the renderer makes it: plain text lines (no escape sequences; the host
/// adds those) and where the terminal's cursor goes, if it is shown.
public struct Frame: Sendable, Hashable {
    /// A cell of the screen, both counted from 0.
    public struct Position: Sendable, Hashable {
        /// The line, from the top.
        public var row: Int
        /// The cell in the line, from the left.
        public var column: Int

        /// The cell at `row`, `column`.
        public init(row: Int, column: Int) {
            self.row = row
            self.column = column
        }
    }

    /// Exactly the screen's height of lines, none wider than the screen.
    public var lines: [String]
    /// Where the cursor blinks (in the line being edited); hidden when `nil`.
    public var cursor: Position?

    /// A frame from its parts.
    public init(lines: [String], cursor: Position? = nil) {
        self.lines = lines
        self.cursor = cursor
    }

    /// The lines as one text, for tests and logs.
    public var text: String { lines.joined(separator: "\n") }
}
