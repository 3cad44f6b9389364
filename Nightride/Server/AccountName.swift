import Foundation
import NightrideModel

/// How a login name becomes an account: trimmed, composed, checked, and keyed without regard to
/// case.
enum AccountName {
    /// A name as the server keeps it: without surrounding spaces, accents composed (NFC), so
    /// that the two spellings of "é" are one user.
    static func normalized(_ name: String) -> String {
        name.trimmingCharacters(in: .whitespacesAndNewlines).precomposedStringWithCanonicalMapping
    }

    /// `name` as the server keeps it (see ``normalized(_:)``), once checked.
    ///
    /// - Throws: `invalidName` for an empty or overlong name, or one with control characters.
    static func checked(_ name: String) throws(Rejection) -> String {
        let normalized = normalized(name)
        guard isValid(normalized) else {
            throw Rejection(
                .invalidName,
                "a name has 1 to \(LoginRequest.maximumNameLength) characters (at most \(LoginRequest.maximumNameBytes) bytes), none of them a control character"
            )
        }
        return normalized
    }

    /// The key of the account a login name, as typed, means.
    static func key(ofLogin name: String) -> String {
        key(of: normalized(name))
    }

    /// Whether a normalized name is acceptable: not empty, within the limits in characters and
    /// bytes, and free of control and format characters (which would hide or reorder text).
    static func isValid(_ name: String) -> Bool {
        !name.isEmpty
            && name.count <= LoginRequest.maximumNameLength
            && name.utf8.count <= LoginRequest.maximumNameBytes
            && !name.unicodeScalars.contains { scalar in
                scalar.properties.generalCategory == .control || scalar.properties.generalCategory == .format
            }
    }

    /// The key of the account a normalized name means: its case-folded form, so that "Ann",
    /// "ANN" and "ann" are one account (and share one limit of failed sign-ins).
    static func key(of normalized: String) -> String {
        normalized.folding(options: [.caseInsensitive], locale: nil)
    }
}
