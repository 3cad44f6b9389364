/// A stored state, event or mutation as a tree, independent of the Swift types that wrote it:
/// what a migration reads and returns, so that it keeps working after those types changed or
/// were deleted.
///
/// The journal stores JSON, so the tree is JSON's, with numbers kept exact: an integer that
/// fits `Int64` or `UInt64` stays one, anything else is a `Double`.
///
/// Swift's synthesized `Codable` writes a struct as an object keyed by property names, and an
/// enum case as an object with one key, the case's name, around an object of its associated
/// values (`_0`, `_1`… or their labels); ``enumCase`` and ``init(case:_:)`` read and write that
/// shape.
///
/// ```swift
/// schema.migrateState(from: 1) { state in
///     state.renameField("pickup", to: "origin")
///     state["rating"] = nil
/// }
/// ```
public enum JournalValue: Sendable, Hashable {
    case null
    case bool(Bool)
    case integer(Int64)
    /// An integer above `Int64.max` (a `UInt64` checksum, say).
    case unsignedInteger(UInt64)
    case double(Double)
    case string(String)
    case array([JournalValue])
    case object([String: JournalValue])

    /// The value of `key` when this is an object; `nil` otherwise. Setting `nil` removes the
    /// key; setting on anything but an object does nothing.
    public subscript(key: String) -> JournalValue? {
        get {
            guard case .object(let fields) = self else { return nil }
            return fields[key]
        }
        set {
            guard case .object(var fields) = self else { return }
            fields[key] = newValue
            self = .object(fields)
        }
    }

    /// Moves the value of field `old` to `new`, when this is an object that has `old`.
    public mutating func renameField(_ old: String, to new: String) {
        guard let value = self[old] else { return }
        self[old] = nil
        self[new] = value
    }

    /// The case name and associated values of an enum value as synthesized `Codable` writes
    /// it: `{"name": {…}}`.
    public var enumCase: (name: String, values: JournalValue)? {
        guard case .object(let fields) = self, fields.count == 1, let (name, values) = fields.first else {
            return nil
        }
        return (name, values)
    }

    /// An enum value as synthesized `Codable` writes it: case `name` with `values`, an object of
    /// its associated values (`_0`, `_1`… or their labels; empty for a case without any).
    public init(case name: String, _ values: [String: JournalValue] = [:]) {
        self = .object([name: .object(values)])
    }

    /// The string, when this is one.
    public var stringValue: String? {
        if case .string(let value) = self { value } else { nil }
    }

    /// The integer, when this is one that fits `Int64`.
    public var integerValue: Int64? {
        if case .integer(let value) = self { value } else { nil }
    }
}

extension JournalValue: Codable {
    public init(from decoder: any Decoder) throws {
        // Objects first, then arrays: most of a stored value is objects, and asking for a
        // container of the wrong type throws, which costs far more than a decode that succeeds.
        if let object = try? decoder.container(keyedBy: AnyKey.self) {
            var fields: [String: JournalValue] = [:]
            for key in object.allKeys {
                fields[key.stringValue] = try object.decode(JournalValue.self, forKey: key)
            }
            self = .object(fields)
            return
        }
        if var array = try? decoder.unkeyedContainer() {
            var elements: [JournalValue] = []
            elements.reserveCapacity(array.count ?? 0)
            while !array.isAtEnd {
                elements.append(try array.decode(JournalValue.self))
            }
            self = .array(elements)
            return
        }
        let single = try decoder.singleValueContainer()
        if single.decodeNil() {
            self = .null
        } else if let value = try? single.decode(String.self) {
            self = .string(value)
        } else if let value = try? single.decode(Bool.self) {
            self = .bool(value)
        } else if let value = try? single.decode(Int64.self) {
            self = .integer(value)
        } else if let value = try? single.decode(UInt64.self) {
            self = .unsignedInteger(value)
        } else {
            self = .double(try single.decode(Double.self))
        }
    }

    public func encode(to encoder: any Encoder) throws {
        switch self {
        case .array(let elements):
            var container = encoder.unkeyedContainer()
            for element in elements {
                try container.encode(element)
            }
        case .object(let fields):
            var container = encoder.container(keyedBy: AnyKey.self)
            for (key, value) in fields {
                try container.encode(value, forKey: AnyKey(key))
            }
        case .null:
            var container = encoder.singleValueContainer()
            try container.encodeNil()
        case .bool(let value):
            var container = encoder.singleValueContainer()
            try container.encode(value)
        case .integer(let value):
            var container = encoder.singleValueContainer()
            try container.encode(value)
        case .unsignedInteger(let value):
            var container = encoder.singleValueContainer()
            try container.encode(value)
        case .double(let value):
            var container = encoder.singleValueContainer()
            try container.encode(value)
        case .string(let value):
            var container = encoder.singleValueContainer()
            try container.encode(value)
        }
    }

    /// Any key of a JSON object.
    private struct AnyKey: CodingKey {
        let stringValue: String
        var intValue: Int? { nil }

        init(_ string: String) {
            stringValue = string
        }

        init?(stringValue: String) {
            self.stringValue = stringValue
        }

        init?(intValue: Int) {
            nil
        }
    }
}

// Not `ExpressibleByNilLiteral`: in a migration that returns `JournalValue?`, `nil` must drop
// the record, never quietly become a JSON null.
extension JournalValue: ExpressibleByStringLiteral, ExpressibleByIntegerLiteral, ExpressibleByBooleanLiteral,
    ExpressibleByArrayLiteral, ExpressibleByDictionaryLiteral, ExpressibleByFloatLiteral
{
    public init(stringLiteral value: String) { self = .string(value) }
    public init(integerLiteral value: Int64) { self = .integer(value) }
    public init(booleanLiteral value: Bool) { self = .bool(value) }
    public init(arrayLiteral elements: JournalValue...) { self = .array(elements) }
    public init(floatLiteral value: Double) { self = .double(value) }
    public init(dictionaryLiteral elements: (String, JournalValue)...) {
        self = .object(Dictionary(elements, uniquingKeysWith: { _, last in last }))
    }
}
