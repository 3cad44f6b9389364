/// A one-line text editor: the title of a new task, or a task's title being changed.
///
/// A value, changed by ``handle(_:)`` one key at a time, so that it is tested without a
/// terminal. The text is kept sanitized as it is typed: a pasted escape sequence or newline
/// never gets into a title.
public struct LineEditor: Sendable, Hashable {
    /// What a key did to the editor.
    public enum Outcome: Sendable, Hashable {
        /// Still editing.
        case editing
        /// Enter: the text, trimmed of surrounding spaces.
        case committed(String)
        /// Escape: the edit is abandoned.
        case cancelled
    }

    /// The text, one element per character.
    public private(set) var characters: [Character]
    /// Where the next character goes: 0 is before the first.
    public private(set) var cursor: Int
    /// The most characters it takes: what the server accepts in a title.
    public let limit: Int

    /// An editor holding `text`, the cursor at its end.
    public init(_ text: String = "", limit: Int = 200) {
        self.limit = limit
        characters = Array(TerminalText.sanitized(text).prefix(limit))
        cursor = characters.count
    }

    /// The text as it stands.
    public var text: String { String(characters) }

    /// Applies `key`: characters are inserted at the cursor; ←/→, Home/End (Ctrl-A/Ctrl-E)
    /// move it; Backspace and Delete remove around it; Ctrl-U clears before it, Ctrl-K after it,
    /// Ctrl-W the word before it; Enter commits and Escape cancels.
    public mutating func handle(_ key: Key) -> Outcome {
        switch key {
        case .character(let character):
            insert(character)
        case .tab:
            insert(" ")
        case .enter:
            return .committed(text.trimmingSpaces)
        case .escape:
            return .cancelled
        case .backspace, .control("h"):
            if cursor > 0 {
                characters.remove(at: cursor - 1)
                cursor -= 1
            }
        case .delete, .control("d"):
            if cursor < characters.count { characters.remove(at: cursor) }
        case .left, .control("b"):
            cursor = max(0, cursor - 1)
        case .right, .control("f"):
            cursor = min(characters.count, cursor + 1)
        case .home, .control("a"):
            cursor = 0
        case .end, .control("e"):
            cursor = characters.count
        case .control("u"):
            characters.removeSubrange(0..<cursor)
            cursor = 0
        case .control("k"):
            characters.removeSubrange(cursor...)
        case .control("w"):
            // Spaces just before the cursor, then the word before them.
            var start = cursor
            while start > 0 && characters[start - 1] == " " { start -= 1 }
            while start > 0 && characters[start - 1] != " " { start -= 1 }
            characters.removeSubrange(start..<cursor)
            cursor = start
        case .control, .up, .down, .backTab:
            break
        }
        return .editing
    }

    private mutating func insert(_ character: Character) {
        let clean = TerminalText.sanitized(String(character))
        for character in clean where characters.count < limit {
            characters.insert(character, at: cursor)
            cursor += 1
        }
    }
}

extension String {
    /// The text without leading or trailing spaces.
    var trimmingSpaces: String {
        String(drop(while: { $0 == " " }).reversed().drop(while: { $0 == " " }).reversed())
    }
}
