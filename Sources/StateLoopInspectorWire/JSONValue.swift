/// Any JSON value, as the inspector keeps events and states: decoded from the app's `Codable`
/// form, so that a session can be read, redacted, compared and shown without the app's types.
public enum JSONValue: Codable, Sendable, Hashable {
    case null
    case bool(Bool)
    case number(Double)
    case string(String)
    case array([JSONValue])
    case object([String: JSONValue])

    public init(from decoder: any Decoder) throws {
        let container = try decoder.singleValueContainer()
        if container.decodeNil() {
            self = .null
        } else if let bool = try? container.decode(Bool.self) {
            self = .bool(bool)
        } else if let number = try? container.decode(Double.self) {
            self = .number(number)
        } else if let string = try? container.decode(String.self) {
            self = .string(string)
        } else if let array = try? container.decode([JSONValue].self) {
            self = .array(array)
        } else {
            self = .object(try container.decode([String: JSONValue].self))
        }
    }

    public func encode(to encoder: any Encoder) throws {
        var container = encoder.singleValueContainer()
        switch self {
        case .null: try container.encodeNil()
        case .bool(let bool): try container.encode(bool)
        case .number(let number): try container.encode(number)
        case .string(let string): try container.encode(string)
        case .array(let array): try container.encode(array)
        case .object(let object): try container.encode(object)
        }
    }

    /// The differences between `self` and `other`, one line per path (`state.ride.value`), in
    /// path order; empty when they are equal.
    public func differences(from other: JSONValue, at path: String = "") -> [String] {
        switch (self, other) {
        case (.object(let mine), .object(let theirs)):
            return Set(mine.keys).union(theirs.keys).sorted().flatMap { key in
                (mine[key] ?? .null).differences(from: theirs[key] ?? .null, at: path.isEmpty ? key : "\(path).\(key)")
            }
        case (.array(let mine), .array(let theirs)) where mine.count == theirs.count:
            return zip(mine, theirs).enumerated().flatMap { index, pair in pair.0.differences(from: pair.1, at: "\(path)[\(index)]") }
        default:
            return self == other ? [] : ["\(path.isEmpty ? "(whole value)" : path): \(other.compactText) → \(compactText)"]
        }
    }

    /// The value on one line, as JSON.
    public var compactText: String {
        switch self {
        case .null: "null"
        case .bool(let bool): "\(bool)"
        case .number(let number): number == number.rounded() && abs(number) < 1e15 ? "\(Int64(number))" : "\(number)"
        case .string(let string): "\"\(string)\""
        case .array(let array): "[" + array.map(\.compactText).joined(separator: ", ") + "]"
        case .object(let object): "{" + object.keys.sorted().map { "\"\($0)\": \(object[$0]!.compactText)" }.joined(separator: ", ") + "}"
        }
    }
}
