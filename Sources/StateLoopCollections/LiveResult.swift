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
        let order = Self.sorted(matching, by: query)
        fill(count: order.count) { matching[order[$0]] }
    }

    /// The rows `entries` are now as given (`nil`: gone, or hidden). Many at once (more than
    /// 64: a first sync's page): those held are taken out, and those that match are sorted alone
    /// and merged into the chunks they fall in, each of which is copied once. A result of 40,000
    /// rows took a page of 5,000 in 40 ms placed one by one, in the dictionary's order (each row
    /// a binary search and a shift of its chunk), and copied every row held when merged whole.
    ///
    /// A few, or any number for a cut result (a window, ``cut``), are placed one by one, as
    /// ``update(_:to:)`` does: a merge rebuilds the list of chunks, and a row that leaves a
    /// window may let in one it does not hold.
    mutating func update(_ entries: [String: Entry?]) -> Change {
        var change = Change.unchanged
        if cut || entries.count <= 64 {
            for (id, entry) in entries {
                switch update(id, to: entry) {
                case .unchanged: break
                case .changed: change = .changed
                case .reread: return .reread
                }
            }
            return change
        }
        var added: [Held] = []
        added.reserveCapacity(entries.count)
        for (id, entry) in entries {
            if let keys = placed.removeValue(forKey: id) {
                remove(at: place(id, keys))
                change = .changed
            }
            if let entry, query.matches(entry.fields) { added.append(held(entry)) }
        }
        guard !added.isEmpty else { return change }
        let order = Self.sorted(added, by: query)
        merge(order.map { added[$0] })
        if let limit = query.limit, count > limit { trim(to: limit) }
        return .changed
    }

    /// The indices of `rows` in `query`'s order. Sorted by their ids and keys alone, apart from
    /// the rows: a comparison of two `Held` (generic over the app's row type, which this module
    /// is not compiled for) looked up the type's metadata, and took half a page's merge.
    private static func sorted(_ rows: [Held], by query: RowQuery) -> [Int] {
        var placings = rows.indices.map { Placing(id: rows[$0].id, keys: rows[$0].keys, index: $0) }
        placings.sort { query.precedes(($0.id, $0.keys), ($1.id, $1.keys)) }
        return placings.map(\.index)
    }

    /// Puts `sorted`, rows in the query's order that the result does not hold, into their
    /// places: each chunk takes those before its last row (the last chunk, the rest), merged
    /// with its own and split again if it grew past ``chunkCapacity``.
    private mutating func merge(_ sorted: [Held]) {
        var merged: [[Held]] = []
        merged.reserveCapacity(chunks.count + sorted.count / (Self.chunkCapacity / 2) + 1)
        var next = sorted.startIndex
        for (index, chunk) in chunks.enumerated() {
            var end = next
            if index == chunks.count - 1 {
                end = sorted.endIndex
            } else {
                while end < sorted.endIndex, precedes(sorted[end], chunk[chunk.count - 1]) { end += 1 }
            }
            guard end > next else {
                merged.append(chunk)
                continue
            }
            var rows: [Held] = []
            rows.reserveCapacity(chunk.count + end - next)
            var held = 0
            while held < chunk.count, next < end {
                if precedes(sorted[next], chunk[held]) {
                    rows.append(sorted[next])
                    next += 1
                } else {
                    rows.append(chunk[held])
                    held += 1
                }
            }
            rows += chunk[held...]
            rows += sorted[next..<end]
            next = end
            merged += Self.split(rows)
        }
        if chunks.isEmpty { merged = Self.split(Array(sorted)) }
        chunks = merged
        count += sorted.count
        placed.reserveCapacity(count)
        for row in sorted { placed[row.id] = row.keys }
    }

    /// `rows` as chunks: one if it fits, otherwise halves of ``chunkCapacity`` (room for rows
    /// to come before the next split).
    private static func split(_ rows: [Held]) -> [[Held]] {
        guard rows.count > chunkCapacity else { return [rows] }
        let size = chunkCapacity / 2
        return stride(from: 0, to: rows.count, by: size).map { Array(rows[$0..<min($0 + size, rows.count)]) }
    }

    /// Drops the rows past `limit`, and says the result is cut.
    private mutating func trim(to limit: Int) {
        while count > limit {
            let excess = count - limit
            let last = chunks.count - 1
            if chunks[last].count <= excess {
                for row in chunks[last] { placed[row.id] = nil }
                count -= chunks[last].count
                chunks.removeLast()
            } else {
                for row in chunks[last].suffix(excess) { placed[row.id] = nil }
                chunks[last].removeLast(excess)
                count -= excess
            }
        }
        cut = true
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

/// A row's place in a query's order, apart from the row: what ``LiveResult`` sorts.
private struct Placing {
    var id: String
    var keys: [FieldValue]
    var index: Int
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
