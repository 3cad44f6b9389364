import Foundation

/// The kit's JSON: one encoder for stored values and answers, with sorted keys, so that equal
/// values make equal bytes (an unchanged write is skipped by comparing them, and a repeated
/// answer is the same bytes).
enum KitJSON {
    static let encoder: JSONEncoder = {
        let encoder = JSONEncoder()
        encoder.outputFormatting = .sortedKeys
        return encoder
    }()

    static let decoder = JSONDecoder()

}
