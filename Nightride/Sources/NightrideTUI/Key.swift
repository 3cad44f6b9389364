/// A key press, decoded from the bytes a terminal in raw mode sends.
public enum Key: Sendable, Hashable {
    /// A printable character (letters, digits, punctuation, space, accented letters).
    case character(Character)
    /// A letter with Ctrl held, as its lowercase letter (`ctrl("c")` for Ctrl-C).
    case control(Character)
    /// Return or Enter.
    case enter
    /// Backspace (DEL or Ctrl-H, whichever the terminal sends).
    case backspace
    /// Tab.
    case tab
    /// Shift-Tab.
    case backTab
    /// A lone Escape.
    case escape
    /// The arrow keys.
    case up, down, left, right
}

/// Turns the bytes of one `read` into keys.
///
/// A terminal sends an arrow as one escape sequence (`ESC [ A`, or `ESC O A` in application
/// mode) in a single write, so sequences are decoded within a chunk; an Escape at the end of a
/// chunk is the Escape key itself. Unknown sequences are dropped rather than typed as letters.
public enum KeyDecoder {
    /// The keys in `bytes`, in order.
    public static func decode(_ bytes: [UInt8]) -> [Key] {
        var keys: [Key] = []
        var index = 0
        while index < bytes.count {
            let byte = bytes[index]
            switch byte {
            case 0x1B:
                let (key, length) = escapeSequence(bytes, from: index)
                if let key { keys.append(key) }
                index += length
                continue
            case 0x0D, 0x0A:
                keys.append(.enter)
            case 0x09:
                keys.append(.tab)
            case 0x7F, 0x08:
                keys.append(.backspace)
            case 0x01...0x1A:
                keys.append(.control(Character(Unicode.Scalar(byte + 0x60))))
            case 0x20...0x7E:
                keys.append(.character(Character(Unicode.Scalar(byte))))
            case 0xC0...0xF7:
                // A UTF-8 lead byte: the character's bytes arrive together.
                let length = byte >= 0xF0 ? 4 : byte >= 0xE0 ? 3 : 2
                let end = min(bytes.count, index + length)
                if let text = String(validating: bytes[index..<end], as: UTF8.self), let character = text.first {
                    keys.append(.character(character))
                }
                index = end
                continue
            default:
                break
            }
            index += 1
        }
        return keys
    }

    /// The key an escape sequence at `start` stands for, and how many bytes it spans.
    private static func escapeSequence(_ bytes: [UInt8], from start: Int) -> (Key?, Int) {
        guard start + 1 < bytes.count else { return (.escape, 1) }
        let introducer = bytes[start + 1]
        guard introducer == UInt8(ascii: "[") || introducer == UInt8(ascii: "O") else {
            // Alt-letter sends ESC then the letter: treat it as Escape followed by the letter.
            return (.escape, 1)
        }
        // CSI: parameters and intermediates up to a final byte in 0x40...0x7E.
        var end = start + 2
        while end < bytes.count, !(0x40...0x7E).contains(bytes[end]) {
            end += 1
        }
        guard end < bytes.count else { return (nil, bytes.count - start) }
        let length = end - start + 1
        switch bytes[end] {
        case UInt8(ascii: "A"): return (.up, length)
        case UInt8(ascii: "B"): return (.down, length)
        case UInt8(ascii: "C"): return (.right, length)
        case UInt8(ascii: "D"): return (.left, length)
        case UInt8(ascii: "Z"): return (.backTab, length)
        default: return (nil, length)
        }
    }
}
