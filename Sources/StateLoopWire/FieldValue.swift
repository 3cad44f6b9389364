/// The value of one declared field of a collection's row: what queries filter and sort on.
///
/// Four kinds, as SQLite's JSON functions read a field: `null`, integers, reals and text.
/// `true` and `false` are the integers 1 and 0. Values of every kind are ordered in one total
/// order, the one SQLite sorts by, so that a query evaluated by the server on a changed row and
/// the same query run by a store give the same answer:
///
/// - `null` first, then numbers (integers and reals compared by value: `1 == 1.0`), then text;
/// - text by its UTF-8 bytes (SQLite's `BINARY` collation), not by Swift's `String` order;
/// - a real that is not finite (NaN, ±infinity) is `null`: JSON has no such number, so a row's
///   stored fields (and SQLite, for NaN) hold `null` for it, and a live query that ordered it
///   otherwise would disagree with the store's own query. NaN is no exception to the order
///   either, where it would be neither before nor after anything and break a sorted result.
///
/// On the wire a field value is the bare JSON scalar (`null`, `3`, `2.5`, `"ann"`).
public enum FieldValue: Sendable, Comparable, Hashable, CustomStringConvertible {
    /// No value: a missing field, or an optional that is `nil`.
    case null
    /// A whole number; booleans are 1 and 0.
    case integer(Int64)
    /// A number with a fraction.
    case real(Double)
    /// A string.
    case text(String)

    /// `value` as a field value: 1 for `true`, 0 for `false`.
    public static func bool(_ value: Bool) -> FieldValue {
        .integer(value ? 1 : 0)
    }

    /// The value as it is stored and sent: `null` for a real that is not finite, itself
    /// otherwise. Fields and conditions are made canonical, so that the stores' SQL, which
    /// switches on the kind, reads such a real as the `null` it equals.
    var canonical: FieldValue {
        if case .real(let value) = self, !value.isFinite { return .null }
        return self
    }

    /// The rank of the value's kind in the order: numbers share one.
    private var rank: Int {
        switch self {
        case .null: 0
        case .integer: 1
        case .real(let value): value.isFinite ? 1 : 0
        case .text: 2
        }
    }

    public static func < (lhs: FieldValue, rhs: FieldValue) -> Bool {
        switch (lhs, rhs) {
        case (.integer(let a), .integer(let b)): a < b
        // A real that is not finite is null, first of all.
        case (.integer(let a), .real(let b)): b.isFinite && Double(a) < b
        case (.real(let a), .integer(let b)): !a.isFinite || a < Double(b)
        case (.real(let a), .real(let b)): a.isFinite ? b.isFinite && a < b : b.isFinite
        case (.text(let a), .text(let b)): a.utf8.lexicographicallyPrecedes(b.utf8)
        default: lhs.rank < rhs.rank
        }
    }

    public static func == (lhs: FieldValue, rhs: FieldValue) -> Bool {
        switch (lhs, rhs) {
        case (.null, .null): true
        case (.null, .real(let a)), (.real(let a), .null): !a.isFinite
        case (.integer(let a), .integer(let b)): a == b
        case (.integer(let a), .real(let b)), (.real(let b), .integer(let a)): Double(a) == b
        case (.real(let a), .real(let b)): a == b || (!a.isFinite && !b.isFinite)
        // Equal bytes, not canonical equivalence: "é" precomposed and decomposed are two values
        // to SQLite, so they are two values here.
        case (.text(let a), .text(let b)): a.utf8.elementsEqual(b.utf8)
        default: false
        }
    }

    public func hash(into hasher: inout Hasher) {
        switch self {
        case .null:
            hasher.combine(0)
        case .integer(let value):
            hasher.combine(1)
            hasher.combine(Double(value))
        case .real(let value) where !value.isFinite:
            hasher.combine(0)
        case .real(let value):
            hasher.combine(1)
            hasher.combine(value)
        case .text(let value):
            hasher.combine(2)
            for byte in value.utf8 { hasher.combine(byte) }
        }
    }

    public var description: String {
        switch self {
        case .null: "null"
        case .integer(let value): "\(value)"
        case .real(let value): "\(value)"
        case .text(let value): "\"\(value)\""
        }
    }
}

extension FieldValue: Codable {
    public init(from decoder: any Decoder) throws {
        let container = try decoder.singleValueContainer()
        if container.decodeNil() {
            self = .null
        } else if let value = try? container.decode(Int64.self) {
            self = .integer(value)
        } else if let value = try? container.decode(Double.self) {
            self = .real(value)
        } else if let value = try? container.decode(Bool.self) {
            self = .bool(value)
        } else {
            self = .text(try container.decode(String.self))
        }
    }

    public func encode(to encoder: any Encoder) throws {
        var container = encoder.singleValueContainer()
        switch self {
        case .null: try container.encodeNil()
        case .integer(let value): try container.encode(value)
        // JSON has no such number: null, which the value equals.
        case .real(let value) where !value.isFinite: try container.encodeNil()
        case .real(let value): try container.encode(value)
        case .text(let value): try container.encode(value)
        }
    }
}

/// A type whose values can be a row's declared field: the standard library's strings, integers,
/// reals and booleans, and optionals of them.
public protocol FieldValueConvertible: SendableMetatype {
    /// The value as a query reads it.
    var fieldValue: FieldValue { get }
}

extension String: FieldValueConvertible {
    public var fieldValue: FieldValue { .text(self) }
}

extension Int: FieldValueConvertible {
    public var fieldValue: FieldValue { .integer(Int64(self)) }
}

extension Int64: FieldValueConvertible {
    public var fieldValue: FieldValue { .integer(self) }
}

extension Int32: FieldValueConvertible {
    public var fieldValue: FieldValue { .integer(Int64(self)) }
}

extension Double: FieldValueConvertible {
    public var fieldValue: FieldValue { .real(self) }
}

extension Bool: FieldValueConvertible {
    public var fieldValue: FieldValue { .bool(self) }
}

extension FieldValue: FieldValueConvertible {
    public var fieldValue: FieldValue { self }
}

extension Optional: FieldValueConvertible where Wrapped: FieldValueConvertible {
    public var fieldValue: FieldValue { self?.fieldValue ?? .null }
}
