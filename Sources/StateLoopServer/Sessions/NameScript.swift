/// The writing systems a new account's name may use, and which of them may share one name.
///
/// The standard library has no script property (`Unicode.Scalar.Properties` gives general
/// categories, not scripts), so this is a small table of the blocks of the scripts
/// ``AccountName/checkedForSignUp(_:)`` accepts in new names: Latin, Greek, Cyrillic, Arabic, Hebrew, Devanagari, Thai, Hangul, and
/// Han with Hiragana and Katakana. A letter outside every range is refused, whatever its script:
/// a short, reviewable list is safer for names than a guess, and a script can be added here
/// when users need it. Ranges are whole blocks, so a block's own punctuation and digits count
/// as its script (an Arabic-Indic digit is Arabic), which keeps "ann٣" from passing as Latin.
/// Fullwidth and halfwidth forms are left out on purpose: "ａｎｎ" would pass for "ann".
public enum NameScript: String, Sendable, CaseIterable {
    /// Latin letters, with their accented and extended forms.
    case latin = "Latin"
    /// Greek letters.
    case greek = "Greek"
    /// Cyrillic letters.
    case cyrillic = "Cyrillic"
    /// Arabic letters and Arabic-Indic digits.
    case arabic = "Arabic"
    /// Hebrew letters and points.
    case hebrew = "Hebrew"
    /// Devanagari letters and signs.
    case devanagari = "Devanagari"
    /// Thai letters and signs.
    case thai = "Thai"
    /// Hangul syllables and jamo.
    case hangul = "Hangul"
    /// Han ideographs (Chinese characters, Japanese kanji, Korean hanja).
    case han = "Han"
    /// Japanese hiragana.
    case hiragana = "Hiragana"
    /// Japanese katakana.
    case katakana = "Katakana"

    /// The scripts that are written together, so that a name may mix them: Japanese is written
    /// in Han, Hiragana and Katakana at once, Korean in Hangul with some Han. Any other mix
    /// (Latin with Cyrillic, say) is how look-alike names are made.
    public static let writtenTogether: [Set<NameScript>] = [[.han, .hiragana, .katakana], [.hangul, .han]]

    /// The code point ranges of each script (whole Unicode blocks, minus the scalars the
    /// Unicode script data calls Common that could pass for ASCII punctuation).
    private static let ranges: [(ClosedRange<UInt32>, NameScript)] = [
        (0x41...0x5A, .latin), (0x61...0x7A, .latin), (0xAA...0xAA, .latin), (0xBA...0xBA, .latin),
        (0xC0...0xD6, .latin), (0xD8...0xF6, .latin), (0xF8...0x2AF, .latin),
        (0x1E00...0x1EFF, .latin), (0x2C60...0x2C7F, .latin), (0xA720...0xA7FF, .latin), (0xAB30...0xAB6F, .latin),
        (0x370...0x373, .greek), (0x375...0x377, .greek), (0x37A...0x37D, .greek), (0x37F...0x383, .greek),
        (0x386...0x386, .greek), (0x388...0x3FF, .greek), (0x1F00...0x1FFF, .greek),
        (0x400...0x52F, .cyrillic), (0x1C80...0x1C8F, .cyrillic), (0x2DE0...0x2DFF, .cyrillic), (0xA640...0xA69F, .cyrillic),
        (0x591...0x5F4, .hebrew), (0xFB1D...0xFB4F, .hebrew),
        (0x600...0x6FF, .arabic), (0x750...0x77F, .arabic), (0x8A0...0x8FF, .arabic), (0xFB50...0xFDFF, .arabic),
        (0xFE70...0xFEFC, .arabic),
        (0x900...0x97F, .devanagari), (0xA8E0...0xA8FF, .devanagari),
        (0xE01...0xE5B, .thai),
        (0x1100...0x11FF, .hangul), (0x3131...0x318F, .hangul), (0xA960...0xA97F, .hangul), (0xAC00...0xD7FF, .hangul),
        (0x2E80...0x2FDF, .han), (0x3005...0x3007, .han), (0x3021...0x3029, .han), (0x3038...0x303B, .han),
        (0x3400...0x4DBF, .han), (0x4E00...0x9FFF, .han), (0xF900...0xFAFF, .han), (0x20000...0x323AF, .han),
        (0x3041...0x309F, .hiragana),
        (0x30A0...0x30FF, .katakana), (0x31F0...0x31FF, .katakana),
    ]

    /// The script of `scalar` by the table; `nil` when it is in none of them.
    public static func of(_ scalar: Unicode.Scalar) -> NameScript? {
        ranges.first { $0.0.contains(scalar.value) }?.1
    }

    /// Whether `scripts`, the scripts of one name's letters, may be used together.
    public static func mayMix(_ scripts: Set<NameScript>) -> Bool {
        scripts.count <= 1 || writtenTogether.contains { scripts.isSubset(of: $0) }
    }
}
