/// A row's declared fields as the stores keep them: one flat JSON object of field names to
/// `null`, numbers, booleans or strings.
///
/// Written and read by hand because the stores do it once per row: a first sync of 100,000
/// rows spent more time in `JSONDecoder` reading these small objects back than in reading the
/// rows themselves. The reader takes exactly what the writer (and `JSONEncoder`, for what the
/// server stored before) writes; anything else is left to `JSONDecoder` by its caller.
package enum FieldsJSON {
    /// `fields` as a JSON object, keys sorted (names are tokens, which need no escaping);
    /// a real that is not finite is written as `null`, as JSON has no such number.
    package static func encode(_ fields: [String: FieldValue]) -> String {
        var text = "{"
        for (index, name) in fields.keys.sorted().enumerated() {
            if index > 0 { text += "," }
            text += "\"\(name)\":"
            switch fields[name]! {
            case .null: text += "null"
            case .integer(let number): text += String(number)
            case .real(let number): text += number.isFinite ? "\(number)" : "null"
            case .text(let string): text += JSONBytes.quoted(string)
            }
        }
        return text + "}"
    }

    /// The fields of a flat JSON object, as `FieldValue`'s `Decodable` reads them (a number is
    /// an integer when it is one, booleans are 1 and 0); `nil` for anything this reader does not
    /// take (nested values, odd spacing aside), which the caller then decodes with `JSONDecoder`.
    package static func decode(_ text: String) -> [String: FieldValue]? {
        var text = text
        return text.withUTF8 { bytes in
            var reader = JSONBytes(UnsafeRawBufferPointer(bytes))
            return object(&reader)
        }
    }

    private static func object(_ reader: inout JSONBytes) -> [String: FieldValue]? {
        guard reader.take(UInt8(ascii: "{")) else { return nil }
        var fields: [String: FieldValue] = [:]
        if reader.take(UInt8(ascii: "}")) { return reader.atEnd() ? fields : nil }
        repeat {
            // A name twice is left to JSONDecoder, which keeps its first value.
            guard let name = reader.string(), fields[name] == nil, reader.take(UInt8(ascii: ":")), let value = value(&reader) else {
                return nil
            }
            fields[name] = value
        } while reader.take(UInt8(ascii: ","))
        return reader.take(UInt8(ascii: "}")) && reader.atEnd() ? fields : nil
    }

    private static func value(_ reader: inout JSONBytes) -> FieldValue? {
        switch reader.peek() {
        case UInt8(ascii: "\""): return reader.string().map(FieldValue.text)
        case UInt8(ascii: "n"): return reader.word("null") ? .null : nil
        case UInt8(ascii: "t"): return reader.word("true") ? .bool(true) : nil
        case UInt8(ascii: "f"): return reader.word("false") ? .bool(false) : nil
        default:
            guard let literal = reader.numberLiteral() else { return nil }
            if let integer = Int64(literal) { return .integer(integer) }
            // A whole number written as a real (`3.0`, `1e+16`) is an integer to JSONDecoder
            // when it fits one: left to it.
            guard let real = Double(literal), real.isFinite, real.rounded() != real || abs(real) >= 0x1p63 else { return nil }
            return .real(real)
        }
    }
}
