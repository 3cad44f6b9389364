import StateLoopWire

/// A query's result over the rows a device shows, kept in the query's order and updated row by
/// row: a row that changes is taken out of its place and put back where it belongs now, by
/// binary search, so that one row's change costs a logarithm of the result, not a read of it.
///
/// With a limit, the result is the window of the first rows. A row that leaves a full window
/// lets in one that the result does not hold: ``update(_:to:)`` then says ``Change/reread``, and
/// the caller reads the window again.
struct LiveResult<Row: Sendable>: Sendable {
    /// One row of the result with the fields that place it.
    struct Entry: Sendable {
        var id: String
        var fields: [String: FieldValue]
        var row: Row
    }

    /// What an update did.
    enum Change: Equatable {
        case unchanged
        case changed
        /// The window lost a row that the result cannot replace: read it again.
        case reread
    }

    let query: RowQuery
    /// The rows, in the query's order.
    private(set) var entries: [Entry] = []
    /// The fields of each row held, to find its place.
    private var placed: [String: [String: FieldValue]] = [:]
    /// Whether rows past the window match too: a limit cut the result.
    private var cut = false

    /// The result of `query` from `matching`, every visible row that meets its conditions in
    /// its order, at least one more than the limit when there are more.
    init(query: RowQuery, matching: [Entry]) {
        self.query = query
        reset(matching)
    }

    /// Replaces the rows with `matching`, read again.
    mutating func reset(_ matching: [Entry]) {
        var sorted = matching
        sorted.sort { query.precedes(($0.id, $0.fields), ($1.id, $1.fields)) }
        if let limit = query.limit, sorted.count > limit {
            sorted.removeLast(sorted.count - limit)
            cut = true
        } else {
            cut = false
        }
        entries = sorted
        placed = Dictionary(uniqueKeysWithValues: sorted.map { ($0.id, $0.fields) })
    }

    /// The row `id` is now `entry` (`nil`: gone, or hidden).
    mutating func update(_ id: String, to entry: Entry?) -> Change {
        var change = Change.unchanged
        if let fields = placed.removeValue(forKey: id) {
            entries.remove(at: place(id, fields))
            change = .changed
            if cut, entry.map({ query.matches($0.fields) }) != true { return .reread }
        }
        guard let entry, query.matches(entry.fields) else { return change }
        let index = place(entry.id, entry.fields)
        if cut && index == entries.count {
            // Last of a cut window: a row past the window may come before it.
            return change == .changed ? .reread : .unchanged
        }
        entries.insert(entry, at: index)
        placed[entry.id] = entry.fields
        if let limit = query.limit, entries.count > limit {
            let last = entries.removeLast()
            placed[last.id] = nil
            cut = true
        }
        return .changed
    }

    /// The index of the first entry not before (`id`, `fields`): the entry itself, if held.
    private func place(_ id: String, _ fields: [String: FieldValue]) -> Int {
        var low = 0
        var high = entries.count
        while low < high {
            let middle = (low + high) / 2
            if query.precedes((entries[middle].id, entries[middle].fields), (id, fields)) {
                low = middle + 1
            } else {
                high = middle
            }
        }
        return low
    }
}
