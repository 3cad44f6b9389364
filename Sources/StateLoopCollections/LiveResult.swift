import StateLoopWire

/// A query's result over the rows a device shows, kept in the query's order and updated row by
/// row: a row that changes is taken out of its place and put back where it belongs now, by
/// binary search, so that one row's change costs a logarithm of the result, not a read of it.
///
/// The rows are kept in chunks of at most ``chunkCapacity``: a change copies one chunk at most,
/// so that a result handed out (``rows``, a `LiveRows` sharing the chunks) costs its readers
/// nothing when the next change comes, whatever the result's size.
///
/// With a limit, the result is the window of the first rows. A row that leaves a full window
/// lets in one that the result does not hold: ``update(_:to:)`` then says ``Change/reread``, and
/// the caller reads the window again.
struct LiveResult<Row: Sendable>: Sendable {
    /// One row offered to the result, with every field the query reads.
    struct Entry: Sendable {
        var id: String
        var fields: [String: FieldValue]
        var row: Row
    }

    /// One row the result holds: with the values of the query's ordered fields alone, which
    /// place it (a row's every field, kept for each of 100,000 rows, was most of a first sync's
    /// memory after the rows themselves).
    struct Held: Sendable {
        var id: String
        var keys: [FieldValue]
        var row: Row
    }

    /// What an update did.
    enum Change: Equatable {
        case unchanged
        case changed
        /// The window lost a row that the result cannot replace: read it again.
        case reread
    }

    /// The most rows of a chunk; a fuller one is split in two.
    static var chunkCapacity: Int { 512 }

    let query: RowQuery
    /// The rows, in the query's order, in chunks none of which is empty.
    private(set) var chunks: [[Held]] = []
    private(set) var count = 0
    /// The ordered fields' values of each row held, to find its place.
    private var placed: [String: [FieldValue]] = [:]
    /// Whether rows past the window match too: a limit cut the result.
    private(set) var cut = false

    /// The result of `query` from `matching`, every visible row that meets its conditions in
    /// its order, at least one more than the limit when there are more.
    init(query: RowQuery, matching: [Entry]) {
        self.query = query
        reset(matching)
    }

    /// The rows, in order.
    var rows: LiveRows<Row> {
        LiveRows(chunks: chunks, count: count)
    }

    /// Every row held, in order (a copy: for tests and rereads).
    var held: [Held] {
        chunks.flatMap { $0 }
    }

    /// `entry` as the result would hold it.
    func held(_ entry: Entry) -> Held {
        Held(id: entry.id, keys: query.keys(of: entry.fields), row: entry.row)
    }

    /// Whether the row `id` is held.
    func holds(_ id: String) -> Bool {
        placed[id] != nil
    }

    /// Replaces the rows with `matching`, read again or worked out whole.
    mutating func reset(_ matching: [Entry]) {
        reset(held: matching.map(held))
    }

    /// Replaces the rows with `matching`, each placed by the keys it holds.
    mutating func reset(held matching: [Held]) {
        // Sorted by indices, so that each row is copied once, into its chunk.
        var order = Array(matching.indices)
        order.sort { precedes(matching[$0], matching[$1]) }
        fill(count: order.count) { matching[order[$0]] }
    }

    /// Replaces the rows with `ordered`, already in the query's order, and `added`, in any:
    /// `added` sorted alone, then the two merged. Rows that come many at a time into a result
    /// that holds many (a first sync's pages) cost a sort of the page, not of the result.
    mutating func reset(ordered: [Held], adding added: [Held]) {
        var order = Array(added.indices)
        order.sort { precedes(added[$0], added[$1]) }
        var merged: [Held] = []
        merged.reserveCapacity(ordered.count + added.count)
        var (old, new) = (0, 0)
        while old < ordered.count, new < order.count {
            if precedes(added[order[new]], ordered[old]) {
                merged.append(added[order[new]])
                new += 1
            } else {
                merged.append(ordered[old])
                old += 1
            }
        }
        merged += ordered[old...]
        for index in order[new...] { merged.append(added[index]) }
        fill(count: merged.count) { merged[$0] }
    }

    /// Holds the first rows of `total` in order, `row(i)` the i-th, up to the limit.
    private mutating func fill(count total: Int, _ row: (Int) -> Held) {
        if let limit = query.limit, total > limit {
            count = limit
            cut = true
        } else {
            count = total
            cut = false
        }
        placed = Dictionary(minimumCapacity: count)
        for index in 0..<count {
            let held = row(index)
            placed[held.id] = held.keys
        }
        let size = Self.chunkCapacity / 2
        chunks = stride(from: 0, to: count, by: size).map { start in (start..<min(start + size, count)).map(row) }
    }

    /// The row `id` is now `entry` (`nil`: gone, or hidden).
    mutating func update(_ id: String, to entry: Entry?) -> Change {
        var change = Change.unchanged
        if let keys = placed.removeValue(forKey: id) {
            remove(at: place(id, keys))
            change = .changed
            if cut, entry.map({ query.matches($0.fields) }) != true { return .reread }
        }
        guard let entry, query.matches(entry.fields) else { return change }
        let row = held(entry)
        let position = place(row.id, row.keys)
        if cut && position.isEnd(of: chunks) {
            // Last of a cut window: a row past the window may come before it.
            return change == .changed ? .reread : .unchanged
        }
        insert(row, at: position)
        placed[row.id] = row.keys
        if let limit = query.limit, count > limit {
            let last = chunks[chunks.count - 1].removeLast()
            if chunks[chunks.count - 1].isEmpty { chunks.removeLast() }
            count -= 1
            placed[last.id] = nil
            cut = true
        }
        return .changed
    }

    /// Where an entry sits in the chunks.
    struct Position {
        var chunk: Int
        var offset: Int

        func isEnd(of chunks: [[Held]]) -> Bool {
            chunk == chunks.count || (chunk == chunks.count - 1 && offset == chunks[chunk].count)
        }
    }

    /// Whether `a` comes before `b` in the query's order.
    private func precedes(_ a: Held, _ b: Held) -> Bool {
        query.precedes((a.id, a.keys), (b.id, b.keys))
    }

    /// The place of the first row not before (`id`, `keys`): the row itself, if held.
    private func place(_ id: String, _ keys: [FieldValue]) -> Position {
        let key = (id, keys)
        // The first chunk whose last row is not before the key.
        var low = 0
        var high = chunks.count
        while low < high {
            let middle = (low + high) / 2
            let last = chunks[middle][chunks[middle].count - 1]
            if query.precedes((last.id, last.keys), key) { low = middle + 1 } else { high = middle }
        }
        guard low < chunks.count else {
            return Position(chunk: max(chunks.count - 1, 0), offset: chunks.last?.count ?? 0)
        }
        let chunk = chunks[low]
        var first = 0
        var end = chunk.count
        while first < end {
            let middle = (first + end) / 2
            if query.precedes((chunk[middle].id, chunk[middle].keys), key) { first = middle + 1 } else { end = middle }
        }
        return Position(chunk: low, offset: first)
    }

    private mutating func remove(at position: Position) {
        chunks[position.chunk].remove(at: position.offset)
        if chunks[position.chunk].isEmpty { chunks.remove(at: position.chunk) }
        count -= 1
    }

    private mutating func insert(_ entry: Held, at position: Position) {
        count += 1
        guard !chunks.isEmpty else {
            chunks = [[entry]]
            return
        }
        chunks[position.chunk].insert(entry, at: position.offset)
        if chunks[position.chunk].count > Self.chunkCapacity {
            let half = chunks[position.chunk].count / 2
            let tail = Array(chunks[position.chunk][half...])
            chunks[position.chunk].removeSubrange(half...)
            chunks.insert(tail, at: position.chunk + 1)
        }
    }
}

/// A live query's rows, in the query's order: a collection that shares its storage with the
/// live query, so that handing it out copies nothing.
public struct LiveRows<Row: Sendable>: RandomAccessCollection, Sendable {
    private let chunks: [[LiveResult<Row>.Held]]
    /// Where each chunk starts.
    private let starts: [Int]
    public let count: Int

    init(chunks: [[LiveResult<Row>.Held]], count: Int) {
        self.chunks = chunks
        self.count = count
        var starts: [Int] = []
        starts.reserveCapacity(chunks.count)
        var start = 0
        for chunk in chunks {
            starts.append(start)
            start += chunk.count
        }
        self.starts = starts
    }

    /// No rows.
    public init() {
        self.init(chunks: [], count: 0)
    }

    public var startIndex: Int { 0 }
    public var endIndex: Int { count }

    public subscript(position: Int) -> Row {
        entry(at: position).row
    }

    /// The id of the row at `position`.
    public func id(at position: Int) -> String {
        entry(at: position).id
    }

    private func entry(at position: Int) -> LiveResult<Row>.Held {
        precondition(position >= 0 && position < count, "LiveRows index \(position) out of 0..<\(count)")
        // The last chunk starting at or before the position.
        var low = 0
        var high = starts.count - 1
        while low < high {
            let middle = (low + high + 1) / 2
            if starts[middle] <= position { low = middle } else { high = middle - 1 }
        }
        return chunks[low][position - starts[low]]
    }
}
