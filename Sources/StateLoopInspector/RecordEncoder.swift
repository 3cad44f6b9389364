import Foundation
import StateLoopInspectorWire

/// Makes the ``InspectorRecord`` of a kept entry: its event, state and request encoded and
/// redacted, its time in seconds since the inspector started. A value, so that the link's task
/// encodes without holding the ``Inspector``.
struct RecordEncoder: Sendable {
    let redaction: Redaction
    let start: ContinuousClock.Instant
    /// The wall clock's reading at ``start``, in seconds since 1970.
    let started: Double

    func record(_ entry: RecordBuffer.Entry) -> InspectorRecord {
        var record: InspectorRecord
        if case .record(let fields) = entry.detail {
            record = fields
        } else if case .built(let fields, _) = entry.detail {
            record = fields
        } else {
            record = InspectorRecord(sequence: 0, time: 0, system: entry.system, kind: entry.kind)
        }
        record.sequence = entry.sequence
        record.time = seconds(at: entry.at)
        record.system = entry.system
        record.kind = entry.kind
        switch entry.detail {
        case .sent(let sent): record.source = sent ? "sent" : "effect"
        case .sentFrom(let location):
            record.source = "sent"
            record.location = location.description
        case .stale(let stale): record.reason = stale ? "stale" : "stopped"
        case .effect(let number, let request):
            record.effect = number
            record.request = request.map { ReflectedValue.text(of: $0, redaction: redaction) }
        case .built(_, let build): build(&record, redaction)
        case .none, .record: break
        }
        if let event = entry.event { record.event = redaction.apply(to: Self.json(of: event)) }
        if let state = entry.state {
            let encoded = Self.json(of: state)
            record.state = redaction.apply(to: encoded)
            record.unjournaled = Self.unjournaled(state, encoded: encoded).map { redaction.apply(to: $0) }
        }
        return record
    }

    /// The session's time at `instant`: seconds since the inspector started.
    func seconds(at instant: ContinuousClock.Instant) -> Double {
        start.duration(to: instant).inSeconds
    }

    /// The stored properties of `state` that its `Codable` form `encoded` has no key for, read
    /// by reflection, but those that are `nil`; `nil` when there are none (or `state` is not a
    /// struct or class encoded as an object). Only the properties left out are reflected. A
    /// property the form writes under another key shows twice.
    static func unjournaled(_ state: any Sendable, encoded: JSONValue) -> JSONValue? {
        let mirror = Mirror(reflecting: state)
        guard case .object(let kept) = encoded, mirror.displayStyle == .struct || mirror.displayStyle == .class else { return nil }
        var left: [String: JSONValue] = [:]
        for child in mirror.children.prefix(ReflectedValue.maximumElements) {
            guard let label = child.label, kept[label] == nil else { continue }
            // A nil the Codable form leaves out (`encodeIfPresent`) is no field left out.
            let value = ReflectedValue.reflect(child.value, depth: 1)
            if value != .null { left[label] = value }
        }
        return left.isEmpty ? nil : .object(left)
    }

    /// `value`'s `Codable` form as a JSON value; a value that cannot be encoded says why.
    static func json(of value: any Encodable & Sendable) -> JSONValue {
        do {
            return try JSONDecoder().decode(JSONValue.self, from: JSONEncoder().encode(value))
        } catch {
            return .object(["unencodable": .string("\(type(of: value)): \(error)")])
        }
    }
}
