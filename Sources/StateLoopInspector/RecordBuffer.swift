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
            var entry = entry
            storage.lastSequence += 1
            entry.record.sequence = storage.lastSequence
            if storage.entries.count == capacity {
                storage.entries.removeFirst()
                storage.dropped += 1
            }
            storage.entries.append(entry)
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
            if first.record.sequence > cursor + 1 {
                var marker = InspectorRecord(sequence: first.record.sequence - 1, time: first.record.time, system: first.record.system, kind: .dropped)
                marker.dropped = Int(first.record.sequence - cursor - 1)
                result.append(Entry(record: marker))
            }
            let start = Int(max(cursor + 1, first.record.sequence) - first.record.sequence)
            let end = min(storage.entries.count, start + max(1, limit - result.count))
            result.append(contentsOf: storage.entries[start..<end])
            return result
        }
    }

    /// The entry numbered `sequence`, if it is still kept.
    func entry(_ sequence: UInt64) -> Entry? {
        storage.withLock { storage in
            guard let first = storage.entries.first, sequence >= first.record.sequence, sequence <= storage.lastSequence else { return nil }
            return storage.entries[Int(sequence - first.record.sequence)]
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
