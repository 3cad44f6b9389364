import Dispatch
import Foundation

/// The events of a journal as stored: rows of up to `JournalDatabase.rowCapacity` events, each
/// one JSON array. One encoding per row, not per event, costs less (one encoder set-up, one
/// buffer), and the rows of a long commit or a long restore are coded in parallel, one row per
/// core at a time.
enum JournalRows {
    /// The rows of a commit, and the events that could not be encoded (left out, reported).
    struct Encoded {
        var rows: [EncodedRow] = []
        var unencodable: [(sequence: Int64, detail: String)] = []
    }

    /// Encodes `events` (oldest first) into rows of at most `capacity`; `encoder` serves a
    /// single row (or rows of one event: the baseline, serial), a commit of several rows uses
    /// one encoder per row, in parallel.
    static func encode<Event: Encodable & Sendable>(
        _ events: [(sequence: Int64, event: Event)],
        capacity: Int,
        encoder: JSONEncoder
    ) -> Encoded {
        let starts = Array(stride(from: 0, to: events.count, by: capacity))
        let results: [(EncodedRow?, [(sequence: Int64, detail: String)])]
        if starts.count <= 1 || capacity == 1 {
            results = starts.map { start in
                encodeRow(events[start..<min(start + capacity, events.count)], encoder: encoder)
            }
        } else {
            results = concurrentMap(starts.count) { index in
                let start = starts[index]
                return encodeRow(events[start..<min(start + capacity, events.count)], encoder: JSONEncoder())
            }
        }
        var encoded = Encoded()
        for (row, unencodable) in results {
            if let row { encoded.rows.append(row) }
            encoded.unencodable += unencodable
        }
        return encoded
    }

    /// One row; when the array does not encode, each event alone, to leave out only those that
    /// do not.
    private static func encodeRow<Event: Encodable>(
        _ events: ArraySlice<(sequence: Int64, event: Event)>,
        encoder: JSONEncoder
    ) -> (EncodedRow?, [(sequence: Int64, detail: String)]) {
        guard let first = events.first?.sequence, let last = events.last?.sequence else { return (nil, []) }
        if let payload = try? encoder.encode(events.map(\.event)) {
            return (EncodedRow(first: first, last: last, payload: payload), [])
        }
        var parts: [Data] = []
        var unencodable: [(sequence: Int64, detail: String)] = []
        for (sequence, event) in events {
            do {
                parts.append(try encoder.encode(event))
            } catch {
                unencodable.append((sequence, "\(error)"))
            }
        }
        guard !parts.isEmpty else { return (nil, unencodable) }
        var payload = Data("[".utf8)
        for (index, part) in parts.enumerated() {
            if index > 0 { payload.append(UInt8(ascii: ",")) }
            payload.append(part)
        }
        payload.append(UInt8(ascii: "]"))
        return (EncodedRow(first: first, last: last, payload: payload), unencodable)
    }

    /// A stored row, read whole so that rows can be decoded in parallel.
    struct StoredRow: Sendable {
        let first: Int64
        let last: Int64
        let payload: Data
    }

    /// Decodes `rows` (oldest first) into their events, in order, rows in parallel when there
    /// are several.
    ///
    /// - Throws: the first row's error that does not decode, as `undecodable(sequence, error)`
    ///   names it: the sequence number is the row's first plus the index of the event in it.
    static func decode<Event: Decodable & Sendable>(
        _ rows: [StoredRow],
        as type: Event.Type,
        parallel: Bool = true,
        undecodable: (Int64, any Error) -> JournalError
    ) throws(JournalError) -> [Event] {
        let decoder = JSONDecoder()  // Sendable: one for every row, in parallel or not
        let results: [Result<[Event], RowError>] = concurrentMap(rows.count, serialBelow: parallel ? 2 : .max) { index in
            let row = rows[index]
            do {
                return .success(try decoder.decode([Event].self, from: row.payload))
            } catch {
                return .failure(RowError(sequence: row.first + offset(in: error), error: error))
            }
        }
        var events: [Event] = []
        events.reserveCapacity(rows.count * JournalDatabase.rowCapacity)
        for result in results {
            switch result {
            case .success(let decoded): events += decoded
            case .failure(let failure): throw undecodable(failure.sequence, failure.error)
            }
        }
        return events
    }

    private struct RowError: Error {
        let sequence: Int64
        let error: any Error
    }

    /// The index of the event a decoding error is about: the first step of its coding path.
    private static func offset(in error: any Error) -> Int64 {
        let context: DecodingError.Context? =
            switch error as? DecodingError {
            case .typeMismatch(_, let context), .valueNotFound(_, let context), .keyNotFound(_, let context),
                .dataCorrupted(let context):
                context
            default: nil
            }
        return Int64(context?.codingPath.first?.intValue ?? 0)
    }

    /// `body` of `0..<count`, in order; in parallel over the cores from `serialBelow` items on.
    static func concurrentMap<T: Sendable>(
        _ count: Int,
        serialBelow: Int = 2,
        _ body: @Sendable (Int) -> T
    ) -> [T] {
        guard count >= serialBelow else { return (0..<count).map(body) }
        let results = UnsafeMutableBufferPointer<T?>.allocate(capacity: count)
        results.initialize(repeating: nil)
        defer {
            _ = results.deinitialize()
            results.deallocate()
        }
        // Each index writes its own slot: no two iterations touch the same memory.
        nonisolated(unsafe) let slots = results
        DispatchQueue.concurrentPerform(iterations: count) { index in
            slots[index] = body(index)
        }
        return results.map { $0! }
    }
}
