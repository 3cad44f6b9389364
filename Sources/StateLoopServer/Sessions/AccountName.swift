import Foundation

/// How a sign-in name becomes an account, for a backend's own sign-in route: trimmed, composed,
/// checked, and keyed without regard to case. Hand ``key(ofLogin:)`` to ``Sessions`` as its
/// `userKey`, so that "Ann" and "ann" share one account's sessions.
///
/// Two checks, for two moments: ``checked(_:maximumLength:maximumBytes:)`` for every sign-in
/// (length, no control characters), and ``checkedForSignUp(_:)`` for a name about to become
/// an account (no invisible characters, no letters of two scripts, which is how look-alike
/// names are made). Only sign-ups are held to the second, so that accounts made before a
/// rule was added keep signing in.
///
/// ```swift
/// let name = try AccountName.checked(body.name)
/// if try await account(AccountName.key(of: name)) == nil {
///     _ = try AccountName.checkedForSignUp(name)    // a new account
/// }
/// ```
public enum AccountName {
    /// Why a name was refused, in words to show the user: which character, and why.
    public struct Refusal: Error, Sendable, Equatable, CustomStringConvertible {
        /// The reason, naming a character that may not render by its code point (`U+200B`).
        public let description: String
    }

    /// A name as the server keeps it: without surrounding spaces, accents composed (NFC), so
    /// that the two spellings of "é" are one user.
    public static func normalized(_ name: String) -> String {
        name.trimmingCharacters(in: .whitespacesAndNewlines).precomposedStringWithCanonicalMapping
    }

    /// `name` as the server keeps it (see ``normalized(_:)``), once checked: between 1 and
    /// `maximumLength` characters and at most `maximumBytes` bytes of UTF-8, none of them a
    /// control or format character (which would hide or reorder text).
    ///
    /// - Throws: ``Refusal``, saying the limits.
    public static func checked(_ name: String, maximumLength: Int = 40, maximumBytes: Int = 160) throws(Refusal) -> String {
        let normalized = normalized(name)
        guard isValid(normalized, maximumLength: maximumLength, maximumBytes: maximumBytes) else {
            throw Refusal(
                description:
                    "a name has 1 to \(maximumLength) characters (at most \(maximumBytes) bytes), none of them a control or invisible formatting character"
            )
        }
        return normalized
    }

    /// `name` (already ``checked(_:maximumLength:maximumBytes:)``) once it passes the rules of a new account's name: no
    /// invisible character, and letters of one writing system. Only sign-ups are held to them,
    /// so that accounts created before these rules keep signing in.
    ///
    /// Invisible characters let two names that render alike be two accounts ("ann" and "ann"
    /// followed by a zero-width space), or a name render blank (U+3164 HANGUL FILLER); letters of
    /// two scripts make look-alikes ("pаypal" with a Cyrillic "а"). Digits, spaces and `-`, `_`,
    /// `.` go with any script, and so do combining marks; anything else must be a letter of one
    /// ``NameScript`` (or of scripts written together, as Japanese is).
    ///
    /// - Throws: ``Refusal``, saying which character is refused and why.
    public static func checkedForSignUp(_ name: String) throws(Refusal) -> String {
        var scripts: [NameScript: Unicode.Scalar] = [:]
        for scalar in name.unicodeScalars {
            if isInvisible(scalar) {
                throw Refusal(description: "a new name cannot hold invisible or formatting characters, such as \(codePoint(scalar))")
            }
            if isNeutral(scalar) { continue }
            guard let script = NameScript.of(scalar) else {
                throw Refusal(
                    description:
                        "a new name holds letters of one of the scripts \(NameScript.allCases.map(\.rawValue).joined(separator: ", ")), digits, spaces, '-', '_' and '.': \(codePoint(scalar)) is none of them"
                )
            }
            if scripts[script] == nil { scripts[script] = scalar }
            guard NameScript.mayMix(Set(scripts.keys)) else {
                let mixed = scripts.sorted { $0.key.rawValue < $1.key.rawValue }.map { "\($0.key.rawValue) (\(codePoint($0.value)))" }
                throw Refusal(description: "a new name's letters must all be of one script: this one mixes \(mixed.joined(separator: " and "))")
            }
        }
        return name
    }

    /// Whether `scalar` renders as nothing, or changes how its neighbours render, rather than
    /// being a mark of its own: default-ignorable code points (zero-width characters, joiners,
    /// variation selectors, the Hangul fillers U+115F, U+1160, U+3164 and U+FFA0, which Unicode
    /// lists there), format characters (category Cf: bidirectional controls, soft hyphen…),
    /// spaces other than U+0020, and line or paragraph separators. The fillers are also named,
    /// so that the rule does not depend on the Unicode data of the platform's runtime.
    static func isInvisible(_ scalar: Unicode.Scalar) -> Bool {
        let properties = scalar.properties
        switch properties.generalCategory {
        case .format, .control, .lineSeparator, .paragraphSeparator, .privateUse, .unassigned, .surrogate:
            return true
        case .spaceSeparator:
            return scalar != " "
        default:
            return properties.isDefaultIgnorableCodePoint || properties.isVariationSelector
                || [0x115F, 0x1160, 0x3164, 0xFFA0, 0x2800].contains(scalar.value)
        }
    }

    /// Whether `scalar` goes with any script: an ASCII digit, the space, `-`, `_`, `.`, or a
    /// combining mark of the general blocks (Unicode's Inherited script: an accent on a letter).
    private static func isNeutral(_ scalar: Unicode.Scalar) -> Bool {
        switch scalar.value {
        case 0x30...0x39, 0x20, 0x2D, 0x5F, 0x2E: true
        case 0x300...0x36F, 0x1AB0...0x1AFF, 0x1DC0...0x1DFF, 0x20D0...0x20FF, 0xFE20...0xFE2F: true
        default: false
        }
    }

    /// `U+XXXX`, how a refusal names a character that may not render.
    private static func codePoint(_ scalar: Unicode.Scalar) -> String {
        let hex = String(scalar.value, radix: 16, uppercase: true)
        return "U+" + String(repeating: "0", count: max(0, 4 - hex.count)) + hex
    }

    /// The key of the account a sign-in name, as typed, means: ``key(of:)`` of its
    /// ``normalized(_:)`` form.
    public static func key(ofLogin name: String) -> String {
        key(of: normalized(name))
    }

    /// Whether a normalized name is acceptable: not empty, within the limits in characters and
    /// bytes, and free of control and format characters.
    private static func isValid(_ name: String, maximumLength: Int, maximumBytes: Int) -> Bool {
        !name.isEmpty
            && name.count <= maximumLength
            && name.utf8.count <= maximumBytes
            && !name.unicodeScalars.contains { scalar in
                scalar.properties.generalCategory == .control || scalar.properties.generalCategory == .format
            }
    }

    /// The key of the account a normalized name means: its case-folded form, so that "Ann",
    /// "ANN" and "ann" are one account (and share one limit of failed sign-ins).
    public static func key(of normalized: String) -> String {
        normalized.folding(options: [.caseInsensitive], locale: nil)
    }
}
