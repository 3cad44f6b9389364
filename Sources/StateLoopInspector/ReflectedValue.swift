import StateLoopInspectorWire

/// Any value as a JSON value, through reflection: how an effect's request (a value of the app's,
/// `Codable` or not) is shown, with the inspector's redaction applied to its fields like to any
/// event's. Structs and classes become objects of their stored properties, enum cases objects
/// of one member, collections arrays, numbers, booleans and strings themselves; anything else
/// its description. Bounded in depth and width, so a cyclic or huge value still shows.
enum ReflectedValue {
    static let maximumDepth = 8
    static let maximumElements = 100

    /// `value`, prefixed with its type's name: `PlaceQuery {"limit": 5, "text": "ai"}`; a
    /// string or a number as it is.
    static func text(of value: Any, redaction: Redaction) -> String {
        let json = redaction.apply(to: reflect(value, depth: 0))
        switch json {
        case .object, .array: return "\(type(of: value)) \(json.compactText)"
        case .string(let text): return text
        default: return json.compactText
        }
    }

    static func reflect(_ value: Any, depth: Int) -> JSONValue {
        switch value {
        case let bool as Bool: return .bool(bool)
        case let string as String: return .string(string)
        case let number as any BinaryInteger: return .number(Double(number))
        case let number as Double: return .number(number)
        case let number as Float: return .number(Double(number))
        default: break
        }
        let mirror = Mirror(reflecting: value)
        guard depth < maximumDepth else { return .string("…") }
        switch mirror.displayStyle {
        case .optional:
            return mirror.children.first.map { reflect($0.value, depth: depth) } ?? .null
        case .collection, .set:
            return .array(mirror.children.prefix(maximumElements).map { reflect($0.value, depth: depth + 1) })
        case .dictionary:
            var members: [String: JSONValue] = [:]
            for pair in mirror.children.prefix(maximumElements) {
                let parts = Array(Mirror(reflecting: pair.value).children)
                guard parts.count == 2 else { continue }
                members[String(describing: parts[0].value)] = reflect(parts[1].value, depth: depth + 1)
            }
            return .object(members)
        case .enum:
            guard let payload = mirror.children.first, let name = payload.label else { return .string(String(describing: value)) }
            return .object([name: reflect(payload.value, depth: depth + 1)])
        default:
            guard !mirror.children.isEmpty else { return .string(String(describing: value)) }
            var members: [String: JSONValue] = [:]
            for (index, child) in mirror.children.prefix(maximumElements).enumerated() {
                members[child.label ?? "\(index)"] = reflect(child.value, depth: depth + 1)
            }
            return .object(members)
        }
    }
}
