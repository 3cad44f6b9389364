import Foundation
import StateLoopCollections
import StateLoopInspectorWire

/// The records of a watched collection's activity: where each subscription stands (its status,
/// the cookie it holds, what became of its last answer), each answer summed up, and each
/// change's steps with the change as JSON.
///
/// A pure value: the watch's task owns it.
struct CollectionTracker {
    /// How many ids of the rows an answer brings (and of those it removes) a record names.
    static let shownIDs = 20

    /// Where one subscription stands, as far as the watch has seen.
    struct Subscription {
        var status: String?
        var cookie: String?
        var outcome: String?
        var lastMutationID: UInt64?
    }

    /// The name the records carry.
    let name: String
    /// The collection's declared name.
    let collection: String
    /// The client the changes are sent as, for their ids.
    let client: ClientID
    private var subscriptions: [String: Subscription] = [:]
    /// The changes not yet confirmed or refused, as JSON (not redacted), by sequence.
    private var pending: [UInt64: JSONValue] = [:]

    init(name: String, collection: String, client: ClientID) {
        self.name = name
        self.collection = collection
        self.client = client
    }

    /// The records of `activity`, redacted by `redaction`; their sequence and time are set
    /// when they are kept.
    mutating func records(for activity: CollectionActivity, redaction: Redaction) -> [InspectorRecord] {
        switch activity.kind {
        case .answer(let replace, let cookie, let rows, let removed, let lastMutationID, let outcome):
            let key = activity.subscription ?? ""
            var held = subscriptions[key] ?? Subscription()
            held.outcome = outcome
            if outcome == "applied" {
                held.cookie = cookie
                if let lastMutationID { held.lastMutationID = max(held.lastMutationID ?? 0, lastMutationID) }
            }
            subscriptions[key] = held
            var answer: [String: JSONValue] = [
                "replace": .bool(replace),
                "cookie": .string(cookie),
                "rowCount": .number(Double(rows.count)),
                "rows": .array(rows.prefix(Self.shownIDs).map(JSONValue.string)),
                "removedCount": .number(Double(removed.count)),
                "removed": .array(removed.prefix(Self.shownIDs).map(JSONValue.string)),
            ]
            if let lastMutationID { answer["lastMutationID"] = .number(Double(lastMutationID)) }
            var record = subscriptionRecord(key, held, redaction: redaction)
            record.event = redaction.apply(to: .object(answer))
            record.outcome = outcome
            return [record]
        case .status(let status):
            let key = activity.subscription ?? ""
            var held = subscriptions[key] ?? Subscription()
            held.status =
                switch status {
                case .connecting: "connecting"
                case .live: "live"
                case .refused: "refused"
                }
            subscriptions[key] = held
            return [subscriptionRecord(key, held, redaction: redaction)]
        case .dropped(let refused):
            let key = activity.subscription ?? ""
            var held = subscriptions[key] ?? Subscription()
            held.cookie = nil
            if !refused {
                // Ended by the app: forgotten with its cookie, as the store forgets it.
                held.status = "ended"
                subscriptions[key] = nil
            } else {
                subscriptions[key] = held
            }
            var record = subscriptionRecord(key, held, redaction: redaction)
            record.event = .object(["dropped": .string(refused ? "refused" : "ended")])
            return [record]
        case .queued(let sequence, let data):
            let mutation = (try? JSONDecoder().decode(JSONValue.self, from: data)) ?? .object(["unreadable": .string("\(data.count) bytes")])
            pending[sequence] = mutation
            return [step(sequence, "queued", redaction: redaction)]
        case .accepted(let sequence):
            return [step(sequence, "accepted", redaction: redaction)]
        case .refused(let sequence, let message):
            var record = step(sequence, "refused", redaction: redaction)
            record.reason = message
            pending[sequence] = nil
            return [record]
        case .contained(let sequences):
            return sequences.map { sequence in
                defer { pending[sequence] = nil }
                return step(sequence, "confirmed", redaction: redaction)
            }
        }
    }

    /// Where the subscription `key` stands, as its record's status.
    private func subscriptionRecord(_ key: String, _ held: Subscription, redaction: Redaction) -> InspectorRecord {
        var record = InspectorRecord(sequence: 0, time: 0, system: name, kind: .resource)
        record.collection = collection
        record.subscription = key
        record.status = redaction.apply(
            to: .object([
                "subscription": .string(key),
                "status": held.status.map(JSONValue.string) ?? .null,
                "cookie": held.cookie.map(JSONValue.string) ?? .null,
                "outcome": held.outcome.map(JSONValue.string) ?? .null,
                "lastMutationID": held.lastMutationID.map { .number(Double($0)) } ?? .null,
            ]))
        return record
    }

    /// A step of the change `sequence`, with the change when the watch saw it queued.
    private func step(_ sequence: UInt64, _ outcome: String, redaction: Redaction) -> InspectorRecord {
        var record = InspectorRecord(sequence: 0, time: 0, system: name, kind: .mutation)
        record.collection = collection
        record.mutation = MutationID(client: client, sequence: sequence).rawValue
        record.outcome = outcome
        record.event = pending[sequence].map(redaction.apply)
        return record
    }
}
