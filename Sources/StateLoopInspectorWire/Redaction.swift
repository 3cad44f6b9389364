/// Which fields never leave the app: a member of any JSON object, at any depth, whose name is
/// in `fields`, is replaced by ``placeholder`` (a string field) or by `null` (any other), before
/// a record is kept. Compared by name only, so that `password` is caught in every type that
/// has one.
public struct Redaction: Codable, Sendable, Hashable {
    /// The field names redacted.
    public var fields: Set<String>

    /// What a redacted string becomes.
    public static let placeholder = "<redacted>"

    /// Redacts the members named `fields`.
    public init(fields: Set<String>) {
        self.fields = fields
    }

    /// `value` with every member named in ``fields`` redacted.
    public func apply(to value: JSONValue) -> JSONValue {
        guard !fields.isEmpty else { return value }
        switch value {
        case .object(let members):
            var redacted: [String: JSONValue] = [:]
            for (name, member) in members {
                if fields.contains(name) {
                    if case .string = member { redacted[name] = .string(Self.placeholder) } else { redacted[name] = .null }
                } else {
                    redacted[name] = apply(to: member)
                }
            }
            return .object(redacted)
        case .array(let elements):
            return .array(elements.map(apply))
        default:
            return value
        }
    }
}

extension Redaction {
    private enum CodingKeys: String, CodingKey {
        case fields
    }

    public init(from decoder: any Decoder) throws {
        let container = try decoder.container(keyedBy: CodingKeys.self)
        fields = try container.decode(Set<String>.self, forKey: .fields)
    }

    /// The fields in alphabetical order, so that a session file is the same from one encoding to
    /// the next (a set's own order changes from run to run).
    public func encode(to encoder: any Encoder) throws {
        var container = encoder.container(keyedBy: CodingKeys.self)
        try container.encode(fields.sorted(), forKey: .fields)
    }
}
