import StateLoopWire

/// What a subscriber who saw a query's result at a cookie must learn from the row changes
/// committed since: a pure function of the feed's entries, the query and what the principal
/// may read.
///
/// A row is judged by its fields at the cookie (the `before` of its first change since) and
/// now (the `after` of its last): in the result now, it is sent, whether it entered or changed;
/// in it then but not now (deleted, changed out of the query, or no longer readable), its id is
/// removed; in it neither then nor now, nothing is said, not even its id. Rows are judged once
/// each, however often they changed.
enum RowCatchUp {
    /// The difference: the last change of each row now in the result, in feed order, and the
    /// ids that left it.
    static func difference(
        of changes: [RowChange], query: RowQuery, readable: ([String: FieldValue]) -> Bool
    ) -> (rows: [RowChange], removed: [String]) {
        var first: [String: RowChange] = [:]
        var last: [String: RowChange] = [:]
        var order: [String] = []
        for change in changes {
            let id = change.key.id
            if first[id] == nil {
                first[id] = change
                order.append(id)
            }
            last[id] = change
        }
        func selects(_ fields: [String: FieldValue]?) -> Bool {
            guard let fields else { return false }
            return query.matches(fields) && readable(fields)
        }
        var rows: [RowChange] = []
        var removed: [String] = []
        for id in order {
            let now = last[id]!
            if now.json != nil, selects(now.after) {
                rows.append(now)
            } else if selects(first[id]!.before) {
                removed.append(id)
            }
        }
        return (rows, removed)
    }
}
