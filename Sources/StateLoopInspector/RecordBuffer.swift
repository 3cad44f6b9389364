import DequeModule
import StateLoop
import StateLoopInspectorWire
import Synchronization

/// The records an ``Inspector`` keeps, not yet encoded: at most `capacity`, the oldest dropped
/// first. A gap is never silent: the first record kept after a drop is preceded, in every
/// snapshot, by a ``InspectorRecord/Kind/dropped`` record that counts what went.
///
/// Threading: a mutex guards the queue; appends come from the systems' actors, snapshots from
/// anywhere.
final class RecordBuffer: Sendable {
    /// A record as kept, before it is encoded: small, so that keeping one costs a system little
    /// (the event and state as the app's values, the time as an instant); ``Inspector/record(_:)``
    /// makes the ``InspectorRecord`` of it.
    struct Entry: Sendable {
        /// Set by ``RecordBuffer/append(_:)``.
        var sequence: UInt64 = 0
        let at: ContinuousClock.Instant
        let system: String
        let kind: InspectorRecord.Kind
        var event: (any Encodable & Sendable)? = nil
        var state: (any Encodable & Sendable)? = nil
        var detail: Detail = .none

        /// The fields of the record that depend on its kind.
        enum Detail: Sendable {
            case none
            /// Sent (`true`) or from an effect, for `reduced`.
            case sent(Bool)
            /// Sent from this place in the app's code, for `reduced`.
            case sentFrom(SentFrom)
            /// Stale (`true`) or the system stopped, for `discarded`.
            case stale(Bool)
            /// The effect's number and request (described, and redacted, when encoded), for the
            /// effect kinds.
            case effect(UInt64, request: (any Sendable)?)
            /// Every field but the sequence, time, system and kind, for the rarer kinds
            /// (resources, drop markers). Boxed, as the next: a record has dozens of fields, and
            /// kept inline it would make every entry, a monitor's included, as large.
            indirect case record(InspectorRecord)
            /// The fields known now, and the rest made when the record is encoded (off the
            /// thread that kept it), with the session's redaction: a server's records.
            indirect case built(InspectorRecord, @Sendable (inout InspectorRecord, Redaction) -> Void)
        }
    }

    private struct Storage {
        var entries = Deque<Entry>()
        var lastSequence: UInt64 = 0
        /// Dropped since the last kept entry that follows a drop, with the sequence of the first.
        var dropped = 0
        /// The sender waiting for a record after ``waiterCursor`` (one at most: the connection).
        var waiter: CheckedContinuation<Void, Never>?
    }

    let capacity: Int
    private let storage = Mutex(Storage())

    init(capacity: Int) {
        self.capacity = max(1, capacity)
    }

    /// Numbers `entry` and keeps it, dropping the oldest entry when full.
    func append(_ entry: Entry) {
        let waiter = storage.withLock { storage in
            storage.lastSequence += 1
            if storage.entries.count == capacity {
                storage.entries.removeFirst()
                storage.dropped += 1
            }
            // Numbered in place: one copy of the entry, into the queue.
            storage.entries.append(entry)
            storage.entries[storage.entries.count - 1].sequence = storage.lastSequence
            defer { storage.waiter = nil }
            return storage.waiter
        }
        waiter?.resume()
    }

    /// Returns once a record after `cursor` exists, or the calling task is cancelled.
    func waitForRecords(after cursor: UInt64) async {
        await withTaskCancellationHandler {
            await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
                let resumeNow = storage.withLock { storage in
                    guard storage.lastSequence <= cursor, !Task.isCancelled else { return true }
                    storage.waiter?.resume()
                    storage.waiter = continuation
                    return false
                }
                if resumeNow { continuation.resume() }
            }
        } onCancel: {
            storage.withLock { storage in
                defer { storage.waiter = nil }
                return storage.waiter
            }?.resume()
        }
    }

    /// Up to `limit` entries after `cursor`, oldest first; when entries after `cursor` were
    /// dropped, a ``InspectorRecord/Kind/dropped`` record counting them comes first.
    func entries(after cursor: UInt64, limit: Int) -> [Entry] {
        storage.withLock { storage in
            guard let first = storage.entries.first, storage.lastSequence > cursor else { return [] }
            var result: [Entry] = []
            if first.sequence > cursor + 1 {
                result.append(Self.marker(before: first, dropped: Int(first.sequence - cursor - 1)))
            }
            let start = Int(max(cursor + 1, first.sequence) - first.sequence)
            let end = min(storage.entries.count, start + max(1, limit - result.count))
            result.append(contentsOf: storage.entries[start..<end])
            return result
        }
    }

    /// The entry numbered `sequence`, if it is still kept.
    func entry(_ sequence: UInt64) -> Entry? {
        storage.withLock { storage in
            guard let first = storage.entries.first, sequence >= first.sequence, sequence <= storage.lastSequence else { return nil }
            return storage.entries[Int(sequence - first.sequence)]
        }
    }

    /// How many entries were dropped in all.
    var dropped: Int {
        storage.withLock { $0.dropped }
    }

    /// The entries kept, oldest first, behind a record of what was dropped before them.
    func snapshot() -> [Entry] {
        storage.withLock { storage in
            guard storage.dropped > 0, let first = storage.entries.first else { return Array(storage.entries) }
            return [Self.marker(before: first, dropped: storage.dropped)] + Array(storage.entries)
        }
    }

    /// The record that says `dropped` records went before `first`: numbered just before it.
    private static func marker(before first: Entry, dropped: Int) -> Entry {
        var fields = InspectorRecord(sequence: 0, time: 0, system: first.system, kind: .dropped)
        fields.dropped = dropped
        var marker = Entry(at: first.at, system: first.system, kind: .dropped, detail: .record(fields))
        marker.sequence = first.sequence - 1
        return marker
    }
}
