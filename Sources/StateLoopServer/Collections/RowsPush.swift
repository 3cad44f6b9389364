import Foundation
import StateLoopWire

/// A difference of one subscription's result, as its socket's outbox holds it until written:
/// rows by id, ids removed, the cookie it brings the reader to. Two differences waiting for a
/// slow reader are composed into one (``followed(by:)``), so a reader who falls behind costs at
/// most one difference, never a queue that grows, and catches up with the same result.
struct RowsPush: Sendable, Hashable {
    /// The position the reader stands at once it applied this difference.
    var cookie: CollectionCookie
    /// Whether ``rows`` is the whole result.
    var replace: Bool
    /// The rows entered or changed, in the order given, each with its version and JSON.
    private(set) var rows: [Sent] = []
    /// Where each id stands in ``rows``.
    private var index: [String: Int] = [:]
    /// The ids that left, in the order given.
    private(set) var removed: [String] = []
    /// The reader's `lastMutationID` as of the newest commit composed in.
    var lastMutationID: UInt64?
    /// Set on a page of a whole result that more follow: the id after which the next page
    /// starts.
    var next: String?
    /// Whether it is pushed whatever its size: a socket's first answer and a whole result, which
    /// a reader has no cheaper way to get, and anything composed with them. A later difference
    /// over the push limit is sent as a hint, and its socket closed.
    var isUnlimited = false

    /// A row as sent.
    struct Sent: Sendable, Hashable {
        var id: String
        var version: Version
        var json: Data
    }

    init(cookie: CollectionCookie, replace: Bool, rows: [Sent], removed: [String], lastMutationID: UInt64?) {
        self.cookie = cookie
        self.replace = replace
        self.lastMutationID = lastMutationID
        for row in rows { put(row) }
        self.removed = removed
    }

    /// Whether it says nothing but its cookie.
    var isEmpty: Bool {
        !replace && rows.isEmpty && removed.isEmpty
    }

    /// This difference, then `later`: the result a reader reaches by applying both, as one
    /// difference. A later replacement replaces everything; otherwise later rows replace earlier
    /// ones and later removals remove them.
    func followed(by later: RowsPush) -> RowsPush {
        guard !later.replace else { return later }
        var composed = self
        composed.isUnlimited = isUnlimited || later.isUnlimited
        for id in later.removed {
            if let at = composed.index.removeValue(forKey: id) {
                composed.rows.remove(at: at)
                for (other, position) in composed.index where position > at { composed.index[other] = position - 1 }
            }
            // Removed from a whole result, a row is simply not in it.
            if !composed.replace, !composed.removed.contains(id) { composed.removed.append(id) }
        }
        for row in later.rows {
            composed.removed.removeAll { $0 == row.id }
            composed.put(row)
        }
        composed.cookie = later.cookie
        composed.lastMutationID = later.lastMutationID.map { max($0, lastMutationID ?? 0) } ?? lastMutationID
        return composed
    }

    private mutating func put(_ row: Sent) {
        if let at = index[row.id] {
            rows[at] = row
        } else {
            index[row.id] = rows.count
            rows.append(row)
        }
    }

    /// StateLoopWire's `RowsDifference` as JSON.
    var message: Data {
        WireMessage.rows(
            cookie: cookie, replace: replace, rows: rows.map { ($0.id, $0.version, $0.json) }, removed: removed, lastMutationID: lastMutationID,
            next: next)
    }

    /// The answer to a subscription at `cookie`, read in `store`: the difference since, when
    /// the feed still holds it and the query has no limit; the whole result otherwise.
    static func answer(
        of collection: String, matching query: RowQuery, since cookie: CollectionCookie?, in store: any StoreTransaction,
        lastMutationID: UInt64?, readable: ([String: FieldValue]) -> Bool
    ) throws -> RowsPush {
        let bounds = try store.rowFeedBounds()
        // A difference from the feed is only right for the query the reader's rows were
        // selected by (the cookie names it), within the history the feed still holds.
        if let cookie, query.limit == nil, cookie.epoch == store.epoch, cookie.query == CollectionCookie.digest(of: query),
            cookie.position >= bounds.forgottenThrough, cookie.position <= bounds.newest
        {
            let changes = try store.rowChanges(of: collection, after: cookie.position, limit: maximumCatchUpChanges + 1)
            if changes.count <= maximumCatchUpChanges {
                let (rows, removed) = RowCatchUp.difference(of: changes, query: query, readable: readable)
                return RowsPush(
                    cookie: CollectionCookie(epoch: store.epoch, position: bounds.newest, of: query), replace: false,
                    rows: rows.map { Sent(id: $0.key.id, version: $0.version, json: $0.json!) }, removed: removed,
                    lastMutationID: lastMutationID)
            }
        }
        var whole = try whole(of: collection, matching: query, in: store, readable: readable, newest: bounds.newest)
        whole.lastMutationID = lastMutationID
        return whole
    }

    /// The query's whole result, read in `store`, with the cookie of the feed's newest position.
    /// A query with a limit selects the first rows the reader may read: the rows are read without
    /// the limit, filtered, then cut.
    static func whole(
        of collection: String, matching query: RowQuery, in store: any StoreTransaction, readable: ([String: FieldValue]) -> Bool,
        newest: UInt64? = nil
    ) throws -> RowsPush {
        let position = try newest ?? store.rowFeedBounds().newest
        var unlimited = query
        unlimited.limit = nil
        let rows = try store.rows(of: collection, matching: unlimited).filter { readable($0.fields) }.prefix(query.limit ?? .max)
        var whole = RowsPush(
            cookie: CollectionCookie(epoch: store.epoch, position: position, of: query), replace: true,
            rows: rows.map { Sent(id: $0.key.id, version: $0.version, json: $0.json) }, removed: [], lastMutationID: nil)
        whole.isUnlimited = true
        return whole
    }

    /// A page of the query's whole result, read in `store`: the rows after the id `after`
    /// (`nil`: from the first) in the order of their ids, at most ``pageRows`` read, those the
    /// principal may read sent, with ``next`` set when a page was read full. Its cookie is the
    /// feed's newest position as it was read. A query with a limit is never paged: its whole
    /// result is the answer to a request for any page.
    ///
    /// Why pages, in the order of the ids: a first sync of 100,000 rows as one answer is held
    /// whole by both sides (the server's read and message, the client's decoding) and written in
    /// one transaction, where pages let each side hold one page and overlap the next page's
    /// read with this one's write; and the ids, unlike the query's order, are a key each page
    /// can resume after, through the table's primary key. A reader that stores the pages and
    /// then catches up from the first page's cookie holds the result exactly: every change
    /// committed while it read is in the feed after that cookie.
    static func page(
        of collection: String, matching query: RowQuery, after id: String?, in store: any StoreTransaction,
        lastMutationID: UInt64?, readable: ([String: FieldValue]) -> Bool
    ) throws -> RowsPush {
        guard query.limit == nil else {
            var whole = try whole(of: collection, matching: query, in: store, readable: readable)
            whole.lastMutationID = lastMutationID
            return whole
        }
        let position = try store.rowFeedBounds().newest
        let read = try store.rows(of: collection, matching: query, after: id, limit: pageRows)
        var page = RowsPush(
            cookie: CollectionCookie(epoch: store.epoch, position: position, of: query), replace: true,
            rows: read.filter { readable($0.fields) }.map { Sent(id: $0.key.id, version: $0.version, json: $0.json) }, removed: [],
            lastMutationID: lastMutationID)
        page.next = read.count == pageRows ? read.last?.key.id : nil
        page.isUnlimited = true
        return page
    }

    /// The most rows a page of a whole result reads: about a megabyte of rows of 200 bytes.
    static let pageRows = 5_000

    /// The most feed entries a catch-up reads: a subscriber further behind gets the whole result,
    /// which is then no dearer than the history.
    static let maximumCatchUpChanges = 10_000
}
