/// Turns the bytes a terminal in raw mode sends into ``Key``s.
///
/// It decodes one read at a time: a terminal sends an escape sequence in one write, so a read
/// that ends in a lone ESC is the Escape key, not the start of a sequence cut in two. Sequences
/// it does not know are dropped whole rather than typed as text.
public enum KeyDecoder {
    /// The keys in `bytes`, in order.
    public static func decode(_ bytes: [UInt8]) -> [Key] {
        var keys: [Key] = []
        var index = 0
        while index < bytes.count {
            let byte = bytes[index]
            switch byte {
            case 0x1B:
                let (key, length) = escapeSequence(bytes, at: index)
                if let key { keys.append(key) }
                index += length
            case 0x0D, 0x0A:
                keys.append(.enter)
                // A CR LF pair (a paste from some terminals) is one Enter.
                index += byte == 0x0D && index + 1 < bytes.count && bytes[index + 1] == 0x0A ? 2 : 1
            case 0x09:
                keys.append(.tab)
                index += 1
            case 0x7F, 0x08:
                keys.append(.backspace)
                index += 1
            case 0x01...0x1A:
                keys.append(.control(Character(Unicode.Scalar(byte - 1 + UInt8(ascii: "a")))))
                index += 1
            case 0x00, 0x1C...0x1F:
                // Ctrl-@, Ctrl-\ and friends mean nothing here.
                index += 1
            default:
                let (character, length) = utf8Character(bytes, at: index)
                if let character { keys.append(.character(character)) }
                index += length
            }
        }
        return keys
    }

    /// The key of the escape sequence at `start` (`nil` for one not known) and its length.
    private static func escapeSequence(_ bytes: [UInt8], at start: Int) -> (Key?, Int) {
        guard start + 1 < bytes.count else { return (.escape, 1) }
        let introducer = bytes[start + 1]
        if introducer == UInt8(ascii: "O"), start + 2 < bytes.count {
            // SS3: what some terminals send for arrows and Home/End in application mode.
            return (finalKey(bytes[start + 2], parameter: nil), 3)
        }
        guard introducer == UInt8(ascii: "[") else {
            // ESC then another key (Alt-x, or Escape typed just before a key): Escape alone,
            // and the next key is decoded on its own.
            return (.escape, 1)
        }
        // CSI: parameters and intermediates up to a final byte in 0x40...0x7E.
        var index = start + 2
        var parameter = ""
        while index < bytes.count {
            let byte = bytes[index]
            if (0x40...0x7E).contains(byte) {
                return (finalKey(byte, parameter: parameter), index - start + 1)
            }
            parameter.append(Character(Unicode.Scalar(byte)))
            index += 1
        }
        // Cut off: nothing to decode.
        return (nil, bytes.count - start)
    }

    private static func finalKey(_ final: UInt8, parameter: String?) -> Key? {
        switch final {
        case UInt8(ascii: "A"): .up
        case UInt8(ascii: "B"): .down
        case UInt8(ascii: "C"): .right
        case UInt8(ascii: "D"): .left
        case UInt8(ascii: "H"): .home
        case UInt8(ascii: "F"): .end
        case UInt8(ascii: "Z"): .backTab
        case UInt8(ascii: "~"):
            // VT-style keys: the first parameter says which.
            switch parameter?.split(separator: ";").first {
            case "1", "7": .home
            case "4", "8": .end
            case "3": .delete
            default: nil
            }
        default: nil
        }
    }

    /// The UTF-8 character at `start` and its length in bytes; an invalid byte is skipped.
    private static func utf8Character(_ bytes: [UInt8], at start: Int) -> (Character?, Int) {
        let lead = bytes[start]
        let length =
            switch lead {
            case 0x00...0x7F: 1
            case 0xC2...0xDF: 2
            case 0xE0...0xEF: 3
            case 0xF0...0xF4: 4
            default: 0
            }
        guard length > 0, start + length <= bytes.count else { return (nil, 1) }
        guard let text = String(validating: bytes[start..<start + length], as: UTF8.self), let character = text.first else {
            return (nil, 1)
        }
        return (character, length)
    }
}
