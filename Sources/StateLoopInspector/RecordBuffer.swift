import DequeModule
import StateLoopInspectorWire
import Synchronization

/// The records an ``Inspector`` keeps, not yet encoded: at most `capacity`, the oldest dropped
/// first. A gap is never silent: the first record kept after a drop is preceded, in every
/// snapshot, by a ``InspectorRecord/Kind/dropped`` record that counts what went.
///
/// Threading: a mutex guards the queue; appends come from the systems' actors, snapshots from
/// anywhere.
final class RecordBuffer: Sendable {
    /// A record with the event and state it carries, as the app's values.
    struct Entry: Sendable {
        var record: InspectorRecord
        var event: (any Encodable & Sendable)?
        var state: (any Encodable & Sendable)?
    }

    private struct Storage {
        var entries = Deque<Entry>()
        var lastSequence: UInt64 = 0
        /// Dropped since the last kept entry that follows a drop, with the sequence of the first.
        var dropped = 0
    }

    let capacity: Int
    private let storage = Mutex(Storage())

    init(capacity: Int) {
        self.capacity = max(1, capacity)
    }

    /// Numbers `entry` and keeps it, dropping the oldest entry when full.
    func append(_ entry: Entry) {
        storage.withLock { storage in
            var entry = entry
            storage.lastSequence += 1
            entry.record.sequence = storage.lastSequence
            if storage.entries.count == capacity {
                storage.entries.removeFirst()
                storage.dropped += 1
            }
            storage.entries.append(entry)
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
            var marker = InspectorRecord(sequence: first.record.sequence - 1, time: first.record.time, system: first.record.system, kind: .dropped)
            marker.dropped = storage.dropped
            return [Entry(record: marker)] + Array(storage.entries)
        }
    }
}
