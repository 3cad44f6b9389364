import Foundation
import StateLoopInspectorWire

/// Replays a recorded inspector session through the app's reducer and checks every state it
/// recorded: the test a session becomes.
///
/// ```swift
/// @Test func rideCancelledWhileOffered() throws {
///     try SessionReplay(contentsOf: fixture("ride-cancelled.json"))
///         .check(system: "client", reduce: ClientState.reduce, as: ClientState.self, ClientEvent.self)
/// }
/// ```
///
/// The replay starts from the first state the session holds for the system (its `attached`
/// record, or else its first reduced event's state), reduces each later event in order (sent
/// ones and those effects sent back alike; discarded ones are skipped, as the system skipped
/// them), and compares each result with the state recorded after that event, both in their
/// `Codable` form with the session's redaction applied. A redacted field the reducer reads
/// (a password's length, say) makes the replay differ: redact less, or check such a system
/// with unit tests.
public struct SessionReplay: Sendable {
    /// The session replayed.
    public let session: InspectorSession

    /// A replay of `session`.
    public init(_ session: InspectorSession) {
        self.session = session
    }

    /// A replay of the session saved at `url` (an inspector's export).
    public init(contentsOf url: URL) throws {
        session = try JSONDecoder().decode(InspectorSession.self, from: Data(contentsOf: url))
    }

    /// Where a replay first differs from the recording.
    public struct Mismatch: Error, CustomStringConvertible {
        /// The record whose state differs.
        public let sequence: UInt64
        /// The event reduced there, as recorded.
        public let event: String
        /// One line per differing path: recorded → replayed.
        public let differences: [String]

        public var description: String {
            "The replay differs from the recording after record \(sequence), event \(event):\n"
                + differences.map { "  \($0)" }.joined(separator: "\n")
                + "\nThe reducer no longer does what it did when the session was recorded: fix it, or record the session again if the new behaviour is intended."
        }
    }

    /// A session that cannot be replayed as asked.
    public struct Unreplayable: Error, CustomStringConvertible {
        public let description: String
    }

    /// Replays the events of the system named `system` through `reduce`; throws a ``Mismatch``
    /// at the first state that differs, or ``Unreplayable`` when the session has no state of
    /// that system or a record does not decode as the given types. Returns how many events were
    /// replayed.
    @discardableResult
    public func check<State: Codable, Event: Codable>(
        system: String,
        reduce: (inout State, Event) -> Void,
        as stateType: State.Type = State.self,
        _ eventType: Event.Type = Event.self
    ) throws -> Int {
        let records = session.records.filter { $0.system == system }
        guard let start = records.firstIndex(where: { $0.kind == .attached || $0.kind == .reduced }), let initial = records[start].state else {
            let known = session.systems.joined(separator: ", ")
            throw Unreplayable(description: "the session holds no state of a system named \"\(system)\" (it has: \(known.isEmpty ? "none" : known))")
        }
        // An app's buffer drops its oldest records, so a gap in its own export comes before
        // every record kept; a gap after the start (sessions joined from several exports, say)
        // may hide events of this system, whatever system its marker names.
        if let gap = session.records.first(where: { $0.kind == .dropped && $0.sequence > records[start].sequence }) {
            throw Unreplayable(
                description: "the session lost \(gap.dropped ?? 0) records before record \(gap.sequence + 1): a replay across them would be wrong")
        }
        var state: State = try decode(initial, as: State.self, at: records[start].sequence)
        var replayed = 0
        for record in records[(start + 1)...] where record.kind == .reduced {
            guard let eventJSON = record.event, let recorded = record.state else { continue }
            reduce(&state, try decode(eventJSON, as: Event.self, at: record.sequence))
            replayed += 1
            let mine = session.redaction.apply(to: try json(of: state))
            let differences = mine.differences(from: recorded)
            if !differences.isEmpty {
                throw Mismatch(sequence: record.sequence, event: eventJSON.compactText, differences: differences)
            }
        }
        return replayed
    }

    private func decode<Value: Decodable>(_ json: JSONValue, as type: Value.Type, at sequence: UInt64) throws -> Value {
        do {
            return try JSONDecoder().decode(Value.self, from: JSONEncoder().encode(json))
        } catch {
            throw Unreplayable(description: "record \(sequence) does not decode as \(Value.self): \(error)")
        }
    }

    private func json(of value: some Encodable) throws -> JSONValue {
        try JSONDecoder().decode(JSONValue.self, from: JSONEncoder().encode(value))
    }
}
