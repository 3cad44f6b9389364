/// One key press, as the board's core understands it: decoded from the terminal's bytes by
/// ``KeyDecoder``, or written directly by a test or a script.
public enum Key: Sendable, Hashable {
    /// A printable character (letters, digits, punctuation, space, any script).
    case character(Character)
    /// Ctrl and a letter, lowercased: `.control("c")` is Ctrl-C.
    case control(Character)
    /// Return (CR or LF).
    case enter
    /// Escape alone (not the start of a sequence).
    case escape
    /// Tab.
    case tab
    /// Shift-Tab.
    case backTab
    /// Backspace (DEL or Ctrl-H, as terminals differ).
    case backspace
    /// The forward delete key.
    case delete
    /// The arrow keys.
    case up
    /// The arrow keys.
    case down
    /// The arrow keys.
    case left
    /// The arrow keys.
    case right
    /// Home.
    case home
    /// End.
    case end

    /// The keys that typing `text` produces: its characters, with a newline as Enter and a tab
    /// as Tab; for scripts and tests.
    public static func typing(_ text: String) -> [Key] {
        text.map { character in
            switch character {
            case "\n", "\r", "\r\n": .enter
            case "\t": .tab
            default: .character(character)
            }
        }
    }
}
