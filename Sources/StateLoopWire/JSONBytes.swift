/// A cursor over JSON text for the few shapes StateLoop reads by hand (a row's fields, the
/// envelope of a collection's message): strings with the common escapes, numbers and words as
/// literals, and any value skipped whole. Anything it does not take makes its reader give up
/// (`nil`), and the caller falls back on `JSONDecoder`, so it never reads wrongly, only slowly.
package struct JSONBytes {
    package let bytes: UnsafeRawBufferPointer
    package var at = 0

    package init(_ bytes: UnsafeRawBufferPointer) {
        self.bytes = bytes
    }

    /// Whether only spaces are left.
    package mutating func atEnd() -> Bool {
        skipSpace()
        return at == bytes.count
    }

    /// Takes `byte` (after spaces) if it comes next.
    package mutating func take(_ byte: UInt8) -> Bool {
        skipSpace()
        guard at < bytes.count, bytes[at] == byte else { return false }
        at += 1
        return true
    }

    /// The byte that comes next (after spaces), if any.
    package mutating func peek() -> UInt8? {
        skipSpace()
        return at < bytes.count ? bytes[at] : nil
    }

    /// A string, unescaped; `nil` for a `\u` escape or a string not closed.
    package mutating func string() -> String? {
        guard take(UInt8(ascii: "\"")) else { return nil }
        let start = at
        var plain = true
        while at < bytes.count, bytes[at] != UInt8(ascii: "\"") {
            if bytes[at] == UInt8(ascii: "\\") {
                plain = false
                at += 1
            }
            at += 1
        }
        guard at < bytes.count else { return nil }
        let raw = UnsafeRawBufferPointer(rebasing: bytes[start..<at])
        at += 1
        if plain { return String(decoding: raw, as: UTF8.self) }
        var unescaped: [UInt8] = []
        unescaped.reserveCapacity(raw.count)
        var index = 0
        while index < raw.count {
            let byte = raw[index]
            index += 1
            guard byte == UInt8(ascii: "\\") else {
                unescaped.append(byte)
                continue
            }
            guard index < raw.count else { return nil }
            let escaped = raw[index]
            index += 1
            switch escaped {
            case UInt8(ascii: "\""), UInt8(ascii: "\\"), UInt8(ascii: "/"): unescaped.append(escaped)
            case UInt8(ascii: "n"): unescaped.append(0x0A)
            case UInt8(ascii: "r"): unescaped.append(0x0D)
            case UInt8(ascii: "t"): unescaped.append(0x09)
            case UInt8(ascii: "b"): unescaped.append(0x08)
            case UInt8(ascii: "f"): unescaped.append(0x0C)
            default: return nil
            }
        }
        return String(decoding: unescaped, as: UTF8.self)
    }

    /// A number's literal as JSON writes it (`-?(0|[1-9][0-9]*)(.[0-9]+)?([eE][+-]?[0-9]+)?`), as
    /// text; `nil` for anything else (`+1`, `01`, `.5`, `5.`), which JSONDecoder refuses.
    package mutating func numberLiteral() -> String? {
        skipSpace()
        let start = at
        func digits() -> Int {
            let first = at
            while at < bytes.count, bytes[at] >= UInt8(ascii: "0"), bytes[at] <= UInt8(ascii: "9") { at += 1 }
            return at - first
        }
        if at < bytes.count, bytes[at] == UInt8(ascii: "-") { at += 1 }
        let integral = at
        guard digits() > 0 else { return nil }
        if bytes[integral] == UInt8(ascii: "0"), at - integral > 1 { return nil }
        if at < bytes.count, bytes[at] == UInt8(ascii: ".") {
            at += 1
            guard digits() > 0 else { return nil }
        }
        if at < bytes.count, bytes[at] == UInt8(ascii: "e") || bytes[at] == UInt8(ascii: "E") {
            at += 1
            if at < bytes.count, bytes[at] == UInt8(ascii: "+") || bytes[at] == UInt8(ascii: "-") { at += 1 }
            guard digits() > 0 else { return nil }
        }
        return String(decoding: UnsafeRawBufferPointer(rebasing: bytes[start..<at]), as: UTF8.self)
    }

    /// Takes `word` (`null`, `true`, `false`) if it comes next.
    package mutating func word(_ word: StaticString) -> Bool {
        skipSpace()
        let count = word.utf8CodeUnitCount
        guard at + count <= bytes.count else { return false }
        for offset in 0..<count where bytes[at + offset] != word.utf8Start[offset] { return false }
        at += count
        return true
    }

    /// Skips one value whole, whatever it holds; the range of its bytes, or `nil` when the text
    /// ends first.
    package mutating func skipValue() -> Range<Int>? {
        skipSpace()
        let start = at
        var depth = 0
        while at < bytes.count {
            let byte = bytes[at]
            switch byte {
            case UInt8(ascii: "\""):
                at += 1
                while at < bytes.count, bytes[at] != UInt8(ascii: "\"") { at += bytes[at] == UInt8(ascii: "\\") ? 2 : 1 }
                guard at < bytes.count else { return nil }
                at += 1
            case UInt8(ascii: "{"), UInt8(ascii: "["):
                depth += 1
                at += 1
            case UInt8(ascii: "}"), UInt8(ascii: "]"):
                guard depth > 0 else { return at > start ? start..<at : nil }
                depth -= 1
                at += 1
            case UInt8(ascii: ","), 0x20, 0x0A, 0x0D, 0x09:
                if depth == 0 { return at > start ? start..<at : nil }
                at += 1
            default:
                at += 1
            }
            if depth == 0, at > start, byte == UInt8(ascii: "}") || byte == UInt8(ascii: "]") || byte == UInt8(ascii: "\"") {
                return start..<at
            }
        }
        return depth == 0 && at > start ? start..<at : nil
    }

    /// `string` as a JSON string: quotes, backslashes, control characters and line separators
    /// escaped, the rest as it is.
    package static func quoted(_ string: String) -> String {
        var quoted = "\""
        for scalar in string.unicodeScalars {
            switch scalar {
            case "\"": quoted += "\\\""
            case "\\": quoted += "\\\\"
            case "\n": quoted += "\\n"
            case "\r": quoted += "\\r"
            case "\t": quoted += "\\t"
            // Control characters, and the line separators some readers of logs and JavaScript
            // take for the end of a line.
            case _ where scalar.value < 0x20 || (0x7F...0x9F).contains(scalar.value) || scalar.value == 0x2028 || scalar.value == 0x2029:
                let hex = String(scalar.value, radix: 16)
                quoted += "\\u" + String(repeating: "0", count: 4 - hex.count) + hex
            default: quoted.unicodeScalars.append(scalar)
            }
        }
        return quoted + "\""
    }

    private mutating func skipSpace() {
        while at < bytes.count, bytes[at] == 0x20 || bytes[at] == 0x0A || bytes[at] == 0x0D || bytes[at] == 0x09 { at += 1 }
    }
}
