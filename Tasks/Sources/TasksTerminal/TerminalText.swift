/// Text made safe and sized for a terminal cell grid.
///
/// Titles and names come from other users through the server: drawn as they are, an escape
/// sequence in one could move the cursor, recolour the screen or retitle the window, and a
/// newline would break the frame's layout. Everything the renderer draws from data goes
/// through ``sanitized(_:)``, then ``fit(_:width:)`` or ``padded(_:width:)``.
public enum TerminalText {
    /// `text` with nothing a terminal would act on: C0 and C1 controls (ESC among them) and DEL
    /// removed, line breaks and tabs turned into spaces, and the invisible format characters
    /// that reorder or hide text (bidirectional overrides, zero-width joiners outside emoji)
    /// removed.
    public static func sanitized(_ text: String) -> String {
        var result = String.UnicodeScalarView()
        for scalar in text.unicodeScalars {
            switch scalar.value {
            case 0x09, 0x0A, 0x0B, 0x0C, 0x0D, 0x85, 0x2028, 0x2029:
                result.append(" ")
            case 0x00...0x1F, 0x7F...0x9F:
                continue
            case 0x200B, 0x200E, 0x200F, 0x202A...0x202E, 0x2060...0x2064, 0x2066...0x2069, 0xFEFF, 0xFFF9...0xFFFB:
                continue
            default:
                result.append(scalar)
            }
        }
        return String(result)
    }

    /// How many columns `character` takes: two for wide East Asian characters and emoji
    /// presentation, none for a lone combining mark, one otherwise. An estimate (terminals
    /// disagree on some), erring on the wide side so that a frame never overflows a line.
    public static func width(of character: Character) -> Int {
        guard let first = character.unicodeScalars.first else { return 0 }
        if character.unicodeScalars.contains(where: { $0.properties.isEmojiPresentation }) { return 2 }
        // A variation selector asking for emoji presentation makes the character wide too.
        if character.unicodeScalars.contains(where: { $0.value == 0xFE0F }) && first.properties.isEmoji { return 2 }
        switch first.value {
        case 0x1100...0x115F, 0x2E80...0x303E, 0x3041...0x33FF, 0x3400...0x4DBF, 0x4E00...0x9FFF, 0xA000...0xA4CF,
            0xAC00...0xD7A3, 0xF900...0xFAFF, 0xFE30...0xFE4F, 0xFF00...0xFF60, 0xFFE0...0xFFE6, 0x20000...0x3FFFD:
            return 2
        default:
            switch first.properties.generalCategory {
            case .nonspacingMark, .enclosingMark, .format: return 0
            default: return 1
            }
        }
    }

    /// How many columns `text` takes.
    public static func width(of text: some StringProtocol) -> Int {
        text.reduce(0) { $0 + width(of: $1) }
    }

    /// `text` cut to at most `width` columns, ending in "…" when it was cut.
    public static func fit(_ text: String, width: Int) -> String {
        guard width > 0 else { return "" }
        guard self.width(of: text) > width else { return text }
        var result = ""
        var used = 0
        // One column kept for the ellipsis.
        for character in text {
            let next = self.width(of: character)
            if used + next > width - 1 { break }
            result.append(character)
            used += next
        }
        return result + "…"
    }

    /// `text` fitted to `width` columns, then filled with spaces to exactly `width`.
    public static func padded(_ text: String, width: Int) -> String {
        let fitted = fit(text, width: width)
        return fitted + String(repeating: " ", count: max(0, width - self.width(of: fitted)))
    }
}
