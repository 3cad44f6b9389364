import Foundation
import GRDB
import StateLoopSync
import StateLoopWire
import Synchronization

/// One collection in a ``LocalStore``: the rows its subscriptions hold, the app's pending
/// changes on top of them, and the live queries that show the result.
///
/// Every write (an answer applied, a change made, refused or contained) runs in one transaction
/// of the store, which then rebases the pending changes on the rows it now holds and updates
/// each live query by the rows whose shown value changed: a change of one row moves one row of
/// each result, whatever the collection's size.
///
/// Made by ``LocalStore/collection(_:mutations:send:)``.
public final class LocalCollection<Row: Codable & Sendable, M: RowMutation>: Sendable where M.Row == Row {
    /// The collection's declaration: its name, ids and fields.
    public let declaration: RowCollection<Row>
    let store: LocalStore
    private let state = Mutex(State())

    private struct State {
        /// The rows the pending changes write or delete, as shown.
        var overlay: [String: Row?] = [:]
        var live: [Int: Live] = [:]
        var nextLive = 0
        /// The field lists an index was made for.
        var indexed: Set<[String]> = []
        var refusals: [Int: AsyncStream<RefusedRowMutation<M>>.Continuation] = [:]
        var nextRefusal = 0
        /// Refusals that came while nobody read ``refusals()`` (the queue sends from the
        /// collection's opening, before the app can ask): the next reader gets them first.
        var unreported: [RefusedRowMutation<M>] = []
        /// Who reads ``activity()``, and what the transaction under way did, told once it
        /// committed.
        var watchers: [Int: AsyncStream<CollectionActivity>.Continuation] = [:]
        /// The subscriptions that run, by key, with how many ``RowSubscription``s share each.
        var running: [String: (runner: SubscriptionRunner, holders: Int)] = [:]
        var nextWatcher = 0
        var notes: [CollectionActivity] = []
        /// Whether the pending changes are being replayed (the overlay being made again): a read
        /// from inside a change's `apply(to:)` then sees the confirmed rows only.
        var replaying = false
    }

    private struct Live {
        var result: LiveResult<Row>
        let query: LiveQuery<Row>
    }

    init(_ declaration: RowCollection<Row>, store: LocalStore) {
        self.declaration = declaration
        self.store = store
        // The pending changes a previous launch left are on top from the start.
        _ = try? write { db in try rebase(db, confirmed: [:]) }
    }

    deinit {
        // Whoever follows the collection's activity, refusals or live queries learns that it is
        // gone.
        let (watchers, refusals, live) = state.withLock {
            (Array($0.watchers.values), Array($0.refusals.values), $0.live.values.map(\.query))
        }
        for watcher in watchers { watcher.finish() }
        for refusal in refusals { refusal.finish() }
        for query in live { query.stop() }
    }

    // MARK: Reading

    /// A live query: the rows that meet `query`'s conditions, in its order, as shown (the
    /// pending changes on top), delivered again whenever a difference or a change alters them.
    /// Reads only declared fields.
    public func live(_ query: RowQuery) -> LiveQuery<Row> {
        let undeclared = query.fields.filter { !declaration.fieldNames.contains($0) }
        precondition(
            undeclared.isEmpty,
            "LocalCollection(\"\(declaration.name)\").live reads \(undeclared) which the collection does not declare: add .field(…) for each"
        )
        let handle = LiveQuery<Row>()
        let id = state.withLock { state in
            state.nextLive += 1
            return state.nextLive
        }
        handle.onStop = { [weak self] in self?.state.withLock { _ = $0.live.removeValue(forKey: id) } }
        do {
            try store.write { db in
                try index(db, query.fields)
                try state.withLock { state in
                    let result = LiveResult(query: query, matching: try entries(db, query, overlay: state.overlay))
                    state.live[id] = Live(result: result, query: handle)
                    handle.publish(result.rows)
                }
            }
        } catch {
            // The store closed (or its file failing): no rows, and an end for every reader
            // rather than a wait for changes that cannot come.
            handle.publish(LiveRows())
            handle.stop()
        }
        return handle
    }

    /// The row `id` as shown, pending changes on top; `nil` when the device holds none.
    ///
    /// Called from inside a `RowMutation`'s `apply(to:)` (which should read its `RowEdits`), it
    /// gives the row as the server confirmed it, without the pending changes: the overlay is
    /// being made again, and the change's own earlier effect would otherwise be counted twice.
    public func row(_ id: String) throws -> Row? {
        try store.read { db in
            let (replaying, written) = state.withLock { ($0.replaying, $0.overlay[id]) }
            if !replaying, let written { return written }
            return try confirmed(db, id)?.value
        }
    }

    /// How many changes wait to be sent or contained in every subscription's rows.
    public var pendingCount: Int {
        (try? store.read { db in
            try Int.fetchOne(db.cachedStatement(sql: "SELECT COUNT(*) FROM mutations WHERE collection = ?"), arguments: [declaration.name])
        } ?? 0) ?? 0
    }

    /// The changes the server refused, each reported once, as they come: each was taken off the
    /// rows shown, the others replayed without it. Those refused while nobody read this stream
    /// (since the collection opened, or between two readers) come first to the next reader.
    public func refusals() -> AsyncStream<RefusedRowMutation<M>> {
        let (stream, continuation) = AsyncStream.makeStream(of: RefusedRowMutation<M>.self)
        let id = state.withLock { state in
            for refusal in state.unreported { continuation.yield(refusal) }
            state.unreported = []
            state.nextRefusal += 1
            state.refusals[state.nextRefusal] = continuation
            return state.nextRefusal
        }
        continuation.onTermination = { [weak self] _ in self?.state.withLock { _ = $0.refusals.removeValue(forKey: id) } }
        return stream
    }

    // MARK: Changing

    /// Makes `mutation`: shown at once, kept in the store, sent after every change made before it.
    ///
    /// The store sends its changes in the order they were made, whatever their collection. So a
    /// change to a collection opened without `send` (``LocalStore/collection(_:mutations:send:)``)
    /// is kept and shown but waits, every later change of the store behind it, until a launch
    /// opens the collection with one, as changes wait behind a collection not opened yet: open a
    /// collection the app changes with its `send`.
    public func mutate(_ mutation: M) throws {
        let data = try JSONEncoder().encode(mutation)
        try write { db in
            let sequence = try store.nextSequence(db)
            try db.cachedStatement(
                sql: "INSERT INTO mutations (sequence, collection, mutation) VALUES (?, ?, ?)"
            ).execute(arguments: [Int64(sequence), declaration.name, data])
            note(CollectionActivity(.queued(sequence: sequence, mutation: data)))
            try rebase(db, confirmed: [:])
        }
        store.queue.wake()
    }

    // MARK: Subscriptions

    /// Keeps the subscription `source` synced into the store until stopped: a socket opened with
    /// the cookie held, each message applied under the protocol's rules, opened again after
    /// each end. The subscription's rows stay in the store when it stops (``RowSubscription/stop()``),
    /// and leave it when it ends (``RowSubscription/end()``).
    ///
    /// Subscribing again to a query that runs (the same source key: a second screen on it) shares
    /// its socket and cookie: two sockets on one cookie would each find the other's messages in
    /// the way, and open again forever.
    public func subscribe(_ source: RowSource<Row>) -> RowSubscription {
        let key = source.key
        let made = SubscriptionRunner(source: source, collection: self)
        let (runner, isNew) = state.withLock { state in
            if let running = state.running[key] {
                state.running[key]!.holders += 1
                return (running.runner, false)
            }
            state.running[key] = (made, 1)
            return (made, true)
        }
        if isNew { runner.start() }
        return RowSubscription(
            runner: runner,
            release: { [weak self] in self?.release(key, runner) ?? true },
            forget: { [weak self] in try self?.drop(key, refused: false) })
    }

    /// The store closes: every subscription running stops (their sockets close now, not at
    /// their next message) and every live query ends, its rows as they stand.
    func storeClosed() {
        let (runners, live) = state.withLock { state in
            defer { state.running = [:] }
            return (state.running.values.map(\.runner), state.live.values.map(\.query))
        }
        for runner in runners { runner.cancel() }
        for query in live { query.stop() }
    }

    /// One subscription to `key` let go of `runner`: stopped when none holds it. Whether none
    /// does now.
    private func release(_ key: String, _ runner: SubscriptionRunner) -> Bool {
        let last = state.withLock { state -> Bool in
            guard let running = state.running[key], running.runner === runner else { return true }
            if running.holders > 1 {
                state.running[key]!.holders -= 1
                return false
            }
            state.running[key] = nil
            return true
        }
        if last {
            runner.cancel()
            try? paused(key)
        }
        return last
    }

    /// The subscription `key` stopped, none running it: its rows stay as they are, and while
    /// another subscription of the collection runs, its `lastMutationID` (frozen now) no longer
    /// holds the changes it has not seen on top. Held there, a change the server accepted would be
    /// replayed over every newer value of the rows it wrote, for as long as the subscription
    /// stays stopped (for good, if the app never runs it again), and the queue would keep every
    /// change since.
    func paused(_ key: String) throws {
        try write { db in
            // Subscribed again meanwhile: running, not stopped.
            guard state.withLock({ $0.running[key] == nil }) else { return }
            try db.cachedStatement(sql: "UPDATE subscriptions SET paused = 1 WHERE key = ?").execute(arguments: [key])
            try rebase(db, confirmed: [:])
        }
    }

    /// Whether the subscription `key` is recorded as stopped (`nil`: not recorded).
    func isPaused(_ key: String) -> Bool? {
        try? store.read { db in try Bool.fetchOne(db.cachedStatement(sql: "SELECT paused FROM subscriptions WHERE key = ?"), arguments: [key]) }
    }

    /// The cookie held for the subscription `key`.
    func cookie(of key: String) -> String? {
        try? store.read { db in try String.fetchOne(db.cachedStatement(sql: "SELECT cookie FROM subscriptions WHERE key = ?"), arguments: [key]) }
    }

    /// Applies an answer of the subscription `key` to a request made with `requestCookie`
    /// (for a socket's message: the socket's cookie, or its previous message's).
    @_spi(Benchmarks) @discardableResult
    public func apply(_ difference: RowsDifference<Row>, requestedWith requestCookie: String?, to key: String) throws -> CollectionRows<Row>.Outcome {
        var paging: PagedSync?
        return try apply(difference, requestedWith: requestCookie, paging: &paging, to: key)
    }

    /// Applies a page of the subscription `key`'s whole result, asked for by pages from no
    /// cookie (``RowSource/page``), `sync` holding what the earlier pages brought: its rows are
    /// stored and shown at once, and the last page (no ``RowsDifference/next``) takes off the
    /// rows no page brought and sets the subscription's cookie to the first page's, from which
    /// the socket catches up on whatever changed while the pages were read. A page for a
    /// subscription that holds a cookie meanwhile (another answer was applied) is `.outdated`:
    /// the pages are moot.
    /// `prepared`, when given, is ``prepare(_:)`` of the page.
    func apply(
        page difference: RowsDifference<Row>, of sync: inout PagedSync, to key: String, prepared: PreparedRows? = nil
    ) throws -> CollectionRows<Row>.Outcome {
        var paging: PagedSync? = sync
        defer { sync = paging! }
        return try apply(difference, requestedWith: nil, paging: &paging, to: key, prepared: prepared)
    }

    /// What storing `difference`'s rows takes that needs no store: each row's declared fields,
    /// and their JSON as stored. Worked out for a page while the page before it is written, on
    /// another thread, where the write would do it row by row.
    func prepare(_ difference: RowsDifference<Row>) -> PreparedRows {
        var prepared = PreparedRows()
        prepared.fields.reserveCapacity(difference.rows.count)
        prepared.json.reserveCapacity(difference.rows.count)
        for row in difference.rows {
            let fields = declaration.fields(of: row.value)
            prepared.fields.append(fields)
            prepared.json.append(FieldsJSON.encode(fields))
        }
        return prepared
    }

    private func apply(
        _ difference: RowsDifference<Row>, requestedWith requestCookie: String?, paging: inout PagedSync?, to key: String,
        prepared: PreparedRows? = nil
    ) throws -> CollectionRows<Row>.Outcome {
        let prepared = prepared ?? prepare(difference)
        let encoder = JSONEncoder()
        encoder.outputFormatting = .sortedKeys
        // Told in the transaction's notes, before what taking it in did (the changes it
        // contained): an inspector reads the answer, then its effects.
        let answered = { (outcome: CollectionRows<Row>.Outcome) -> CollectionRows<Row>.Outcome in
            self.note(
                CollectionActivity(
                    subscription: key,
                    .answer(
                        replace: difference.replace, cookie: difference.cookie, rows: difference.rows.map(\.id), removed: difference.removed,
                        lastMutationID: difference.lastMutationID, outcome: "\(outcome)")))
            return outcome
        }
        return try write { db -> CollectionRows<Row>.Outcome in
            // An answer for a subscription the app ended (in flight as it ended) is dropped:
            // taken, it would bring the subscription back with nothing to keep it up to date.
            guard
                let subscription = try GRDB.Row.fetchOne(db.cachedStatement(sql: "SELECT cookie FROM subscriptions WHERE key = ?"), arguments: [key])
            else {
                return answered(.outdated)
            }
            let held: String? = subscription["cookie"]
            if paging != nil {
                guard difference.replace, held == nil else { return answered(.outdated) }
                if paging?.cookie == nil { (paging!.cookie, paging!.lastMutationID) = (difference.cookie, difference.lastMutationID) }
            } else if difference.replace {
                if let held, CollectionRows<Row>.precedes(difference.cookie, held) { return answered(.outdated) }
            } else if requestCookie == nil || requestCookie != held {
                return answered(.needsCatchUp)
            }
            // The answer that completes the result: a whole one, a difference, or the last page.
            let isLast = paging == nil || difference.next == nil
            // The cookie and lastMutationID the subscription takes: a paged result's are its
            // first page's, read before every other page.
            let cookie = paging?.cookie ?? difference.cookie
            let lastMutationID = paging == nil ? difference.lastMutationID : paging?.lastMutationID
            var confirmed: [String: LiveResult<Row>.Entry?] = [:]
            // The rows written matter to the live queries alone: with none, none is kept.
            let followed = state.withLock { !$0.live.isEmpty }
            if followed { confirmed.reserveCapacity(difference.rows.count + difference.removed.count) }
            // A difference names what leaves; only a whole result needs every row held, and a paged
            // one at its last page, once every page brought its rows.
            var leaving: Set<String> = []
            if !difference.replace {
                leaving = Set(
                    try difference.removed.filter { id in
                        try Bool.fetchOne(
                            db.cachedStatement(sql: "SELECT EXISTS (SELECT 1 FROM members WHERE subscription = ? AND id = ?)"), arguments: [key, id])
                            ?? false
                    })
            } else if isLast {
                leaving = Set(try String.fetchAll(db.cachedStatement(sql: "SELECT id FROM members WHERE subscription = ?"), arguments: [key]))
                    .subtracting(difference.rows.map(\.id)).subtracting(paging?.seen ?? [])
            }
            // A row that leaves the device is remembered with the version it had, as of this
            // answer's position: another subscription behind this one may still bring an older
            // version of it (it left this query, or was deleted), which must not come back.
            let departure = CollectionRows<Row>.position(of: cookie)
            for id in leaving where try leave(db, key, id, remembered: departure) {
                confirmed[id] = .some(nil)
            }
            // The values as the server sent them, when the message kept them: not encoded again.
            let encoded = difference.encoded
            // With no departed row in the collection (a first sync, most answers), none is looked
            // up for each row.
            let holdsDeparted =
                try Bool.fetchOne(
                    db.cachedStatement(sql: "SELECT EXISTS (SELECT 1 FROM departed WHERE collection = ?)"), arguments: [declaration.name]) ?? true
            // Prepared once, not looked up by their text for each of a first sync's rows, and
            // bound through SQLite's own calls (BoundStatement).
            let insertMember = BoundStatement(
                try db.cachedStatement(sql: "INSERT OR IGNORE INTO members (subscription, collection, id) VALUES (?, ?, ?)"))
            try insertMember.bind(1, key)
            try insertMember.bind(2, declaration.name)
            let departedVersion = try db.cachedStatement(sql: "SELECT epoch, counter FROM departed WHERE collection = ? AND id = ?")
            // A row held by another subscription (or an earlier page) at a version as late stays
            // as it is: the version is compared by the write itself, not read first.
            let writeRow = BoundStatement(
                try db.cachedStatement(
                    sql: """
                        INSERT INTO rows (collection, id, epoch, counter, json, fields) VALUES (?, ?, ?, ?, ?, ?)
                        ON CONFLICT (collection, id) DO UPDATE SET
                            epoch = excluded.epoch, counter = excluded.counter, json = excluded.json, fields = excluded.fields
                        WHERE excluded.epoch > rows.epoch OR (excluded.epoch = rows.epoch AND excluded.counter > rows.counter)
                        """))
            try writeRow.bind(1, declaration.name)
            for (index, row) in difference.rows.enumerated() {
                try insertMember.bind(3, row.id)
                try insertMember.run()
                // One that left at a version at least as late stays gone: never an older row.
                if holdsDeparted, let gone = try StoredVersion.fetchOne(departedVersion, arguments: [declaration.name, row.id]),
                    !(gone.version < row.version)
                {
                    continue
                }
                try writeRow.bind(2, row.id)
                try writeRow.bind(3, Int64(bitPattern: row.version.epoch))
                try writeRow.bind(4, Int64(bitPattern: row.version.counter))
                try writeRow.bind(5, try encoded?[index] ?? encoder.encode(row.value))
                try writeRow.bind(6, prepared.json[index])
                try writeRow.run()
                guard db.changesCount > 0 else { continue }
                let fields = prepared.fields[index]
                if followed { confirmed[row.id] = .some(LiveResult.Entry(id: row.id, fields: fields, row: row.value)) }
            }
            if isLast {
                try db.cachedStatement(
                    sql: """
                        INSERT INTO subscriptions (key, collection, cookie, last_mutation_id, refused) VALUES (?, ?, ?, ?, 0)
                        ON CONFLICT (key) DO UPDATE SET cookie = excluded.cookie, refused = 0,
                            last_mutation_id = MAX(COALESCE(last_mutation_id, 0), COALESCE(excluded.last_mutation_id, 0))
                        """
                ).execute(arguments: [key, declaration.name, cookie, lastMutationID.map { Int64(bitPattern: $0) }])
                try forgetDeparted(db)
            } else {
                paging?.seen.formUnion(difference.rows.lazy.map(\.id))
            }
            _ = answered(.applied)
            try rebase(db, confirmed: confirmed)
            return .applied
        }
    }

    /// Forgets the departed rows no subscription can bring back older: every subscription's
    /// cookie stands at or after the answer that took them off, so that whatever comes next is
    /// newer than their departure. A subscription without a cookie (its next answer a whole
    /// result, which may have been read before the departure) keeps them all. Those the app
    /// stopped, or the server refused, do not count: each asks again from now when it runs, so
    /// that a subscription stopped for good does not keep every departure since.
    private func forgetDeparted(_ db: Database) throws {
        var positions: [(epoch: UInt64, position: UInt64)] = []
        for cookie in try String?.fetchAll(
            db.cachedStatement(sql: "SELECT cookie FROM subscriptions WHERE collection = ? AND paused = 0 AND refused = 0"),
            arguments: [declaration.name])
        {
            guard let position = cookie.flatMap(CollectionRows<Row>.position(of:)) else { return }
            positions.append(position)
        }
        guard let floor = positions.min(by: { $0 < $1 }) else {
            try db.cachedStatement(sql: "DELETE FROM departed WHERE collection = ?").execute(arguments: [declaration.name])
            return
        }
        try db.cachedStatement(
            sql: "DELETE FROM departed WHERE collection = ? AND (cookie_epoch < ? OR (cookie_epoch = ? AND position <= ?))"
        ).execute(arguments: [
            declaration.name, Int64(bitPattern: floor.epoch), Int64(bitPattern: floor.epoch), Int64(bitPattern: floor.position),
        ])
    }

    /// Records the subscription `key` (its rows count from now on): answers are applied only to
    /// a recorded subscription.
    @_spi(Benchmarks)
    public func record(_ key: String) throws {
        try store.write { db in
            try db.cachedStatement(
                sql: "INSERT INTO subscriptions (key, collection) VALUES (?, ?) ON CONFLICT (key) DO UPDATE SET paused = 0"
            ).execute(arguments: [key, declaration.name])
        }
    }

    /// Drops the rows of the subscription `key` that no other holds: the query refused the
    /// reader (`refused`), or the app ended the subscription (forgotten with its cookie).
    func drop(_ key: String, refused: Bool) throws {
        try write { db in
            // Ended while another subscription to the key runs (it subscribed as this one ended):
            // the rows and cookie are still its.
            if !refused, state.withLock({ $0.running[key] != nil }) { return }
            var confirmed: [String: LiveResult<Row>.Entry?] = [:]
            for id in try String.fetchAll(db.cachedStatement(sql: "SELECT id FROM members WHERE subscription = ?"), arguments: [key])
            where try leave(db, key, id, remembered: nil) {
                confirmed[id] = .some(nil)
            }
            if refused {
                try db.cachedStatement(sql: "UPDATE subscriptions SET cookie = NULL, refused = 1 WHERE key = ?").execute(arguments: [key])
            } else {
                try db.cachedStatement(sql: "DELETE FROM subscriptions WHERE key = ?").execute(arguments: [key])
            }
            note(CollectionActivity(subscription: key, .dropped(refused: refused)))
            try rebase(db, confirmed: confirmed)
        }
    }

    // MARK: The queue's answers

    /// The server accepted the change `sequence`: it stays on top until every subscription's
    /// rows contain it.
    func accepted(_ sequence: UInt64) throws {
        try write { db in
            try db.cachedStatement(sql: "UPDATE mutations SET answered = 1 WHERE sequence = ?").execute(arguments: [Int64(sequence)])
            note(CollectionActivity(.accepted(sequence: sequence)))
            try rebase(db, confirmed: [:])
        }
    }

    /// The server refused the change `sequence`, or it no longer decodes as `M` (`error` a
    /// `DecodingError`, thrown before it was sent): taken off alone, and reported.
    func refused(_ sequence: UInt64, id: MutationID, error: any Error) throws {
        let found = try write { db -> (data: Data, mutation: M?)? in
            guard
                let data = try Data.fetchOne(
                    db.cachedStatement(sql: "SELECT mutation FROM mutations WHERE sequence = ?"), arguments: [Int64(sequence)])
            else {
                return nil
            }
            try db.cachedStatement(sql: "DELETE FROM mutations WHERE sequence = ?").execute(arguments: [Int64(sequence)])
            note(CollectionActivity(.refused(sequence: sequence, message: "\(error)")))
            try rebase(db, confirmed: [:])
            return (data, try? JSONDecoder().decode(M.self, from: data))
        }
        // Already taken off (refused twice): reported once.
        guard let found else { return }
        // A change that no longer decodes is reported too, without it: the user's work is never
        // dropped unsaid.
        let reported: any Error =
            found.mutation == nil
            ? DroppedMutation(
                id: id, reason: "it no longer decodes as \(M.self) (\(error)); its JSON: \(String(decoding: found.data, as: UTF8.self))")
            : error
        let refusal = RefusedRowMutation(id: id, mutation: found.mutation, message: "\(reported)", error: reported)
        // Yielded under the lock, so that a reader arriving now gets it once: from the kept
        // ones or from its stream.
        state.withLock { state in
            if state.refusals.isEmpty {
                state.unreported.append(refusal)
            } else {
                for continuation in state.refusals.values { continuation.yield(refusal) }
            }
        }
    }

    /// Sends the change `data` with `send`.
    static func send(_ data: Data, id: MutationID, with send: @Sendable (M, MutationID) async throws -> Version) async throws {
        _ = try await send(try JSONDecoder().decode(M.self, from: data), id)
    }

    // MARK: Rebasing

    /// Takes off the changes every subscription's rows contain, replays the others on the rows
    /// held now, and moves the live queries by every row whose shown value changed: those of
    /// `confirmed` (the rows the transaction wrote, with their fields; `nil` for gone) and
    /// those the changes write.
    private func rebase(_ db: Database, confirmed: [String: LiveResult<Row>.Entry?]) throws {
        // The floor: every subscription's rows contain the changes up to it; the stopped ones
        // count only while none other runs (the subscriptions a previous launch left, before
        // the app subscribes again). With no subscription, a change the server accepted has
        // nothing left to wait for. A change at or below the floor that the server has not
        // answered yet (its answer slower than the socket, or a refusal, which moves the floor
        // too) is no longer shown, and leaves with its answer: accepted, or refused and
        // reported.
        let counted = try GRDB.Row.fetchOne(
            db.cachedStatement(
                sql: """
                    SELECT COUNT(*) AS count, MIN(COALESCE(last_mutation_id, 0)) AS floor FROM subscriptions
                    WHERE collection = ? AND refused = 0 AND paused = (
                        SELECT MIN(paused) FROM subscriptions WHERE collection = ? AND refused = 0)
                    """),
            arguments: [declaration.name, declaration.name])
        let subscriptions: Int = counted?["count"] ?? 0
        let floor: Int64 = subscriptions > 0 ? counted?["floor"] ?? 0 : 0
        if isWatched {
            let contained = try Int64.fetchAll(
                db.cachedStatement(
                    sql: "SELECT sequence FROM mutations WHERE collection = ? AND answered = 1 AND (? OR sequence <= ?) ORDER BY sequence"),
                arguments: [declaration.name, subscriptions == 0, floor])
            if !contained.isEmpty { note(CollectionActivity(.contained(sequences: contained.map { UInt64(bitPattern: $0) }))) }
        }
        try db.cachedStatement(
            sql: "DELETE FROM mutations WHERE collection = ? AND answered = 1 AND (? OR sequence <= ?)"
        ).execute(arguments: [declaration.name, subscriptions == 0, floor])
        var edits = RowEdits<Row>(read: { id in (try? self.confirmed(db, id))?.value })
        let decoder = JSONDecoder()
        let pending = try Data.fetchAll(
            db.cachedStatement(sql: "SELECT mutation FROM mutations WHERE collection = ? AND sequence > ? ORDER BY sequence"),
            arguments: [declaration.name, floor])
        state.withLock { $0.replaying = true }
        for data in pending {
            // A change that no longer decodes (the app's type changed) cannot be shown, nor
            // sent: the queue takes it off at its turn and reports it, as a `DroppedMutation`.
            (try? decoder.decode(M.self, from: data))?.apply(to: &edits)
        }
        state.withLock { $0.replaying = false }
        let overlay = edits.written
        try state.withLock { state in
            // Everything that can fail is read before the state changes: a write that throws
            // leaves the overlay and every live query as they were.
            var shown: [String: LiveResult<Row>.Entry?] = [:]
            if state.overlay.isEmpty && overlay.isEmpty {
                // Nothing on top, before or after: the rows shown are the rows written, not
                // copied into a second map (a first sync's 100,000).
                shown = confirmed
            } else if !state.live.isEmpty {
                let affected = Set(confirmed.keys).union(state.overlay.keys).union(overlay.keys)
                shown.reserveCapacity(affected.count)
                for id in affected {
                    if let written = overlay[id] {
                        shown[id] = .some(written.map { LiveResult.Entry(id: id, fields: declaration.fields(of: $0), row: $0) })
                    } else if let held = confirmed[id] {
                        shown[id] = .some(held)
                    } else {
                        shown[id] = .some(
                            try self.confirmed(db, id).map { LiveResult.Entry(id: id, fields: declaration.fields(of: $0.value), row: $0.value) })
                    }
                }
            }
            state.overlay = overlay
            guard !shown.isEmpty, !state.live.isEmpty else { return }
            for key in Array(state.live.keys) {
                // Taken out of the dictionary, so that the result is changed in place: a copy
                // left behind would make the change copy every row's place. Put back however
                // this ends.
                var live = state.live.removeValue(forKey: key)!
                defer { state.live[key] = live }
                // A window (a cut result) offered more rows than it holds (a first sync's page)
                // is read again through its index: placed one by one, most would fall past it.
                if live.result.cut, shown.count > max(64, live.result.count) {
                    live.result.reset(try entries(db, live.result.query, overlay: overlay))
                    live.query.publish(live.result.rows)
                    continue
                }
                // Many rows (a first sync's pages) are sorted alone and merged into the
                // result's chunks; a few are placed one by one (LiveResult.update(_:)).
                switch live.result.update(shown) {
                case .unchanged: break
                case .changed: live.query.publish(live.result.rows)
                case .reread:
                    live.result.reset(try entries(db, live.result.query, overlay: overlay))
                    live.query.publish(live.result.rows)
                }
            }
        }
    }

    // MARK: Activity

    /// What the collection does from now on, for an inspector: each answer applied or set
    /// aside, each subscription's status, each change's steps, told once its transaction
    /// committed. A reader that falls far behind loses the oldest.
    package func activity() -> AsyncStream<CollectionActivity> {
        let (stream, continuation) = AsyncStream.makeStream(of: CollectionActivity.self, bufferingPolicy: .bufferingNewest(4_096))
        let id = state.withLock { state in
            state.nextWatcher += 1
            state.watchers[state.nextWatcher] = continuation
            return state.nextWatcher
        }
        continuation.onTermination = { [weak self] _ in self?.state.withLock { _ = $0.watchers.removeValue(forKey: id) } }
        return stream
    }

    /// Tells the watchers at once (what happened outside a transaction); `kind` is made only when
    /// someone watches.
    func announce(subscription: String? = nil, _ kind: () -> CollectionActivity.Kind) {
        let watchers = state.withLock { Array($0.watchers.values) }
        guard !watchers.isEmpty else { return }
        let activity = CollectionActivity(subscription: subscription, kind())
        for watcher in watchers { watcher.yield(activity) }
    }

    private var isWatched: Bool {
        state.withLock { !$0.watchers.isEmpty }
    }

    /// Keeps `activity` for the watchers until the transaction under way commits.
    private func note(_ activity: @autoclosure () -> CollectionActivity) {
        state.withLock { state in
            if !state.watchers.isEmpty { state.notes.append(activity()) }
        }
    }

    /// A write transaction of the store, whose notes are told once it committed (and dropped if
    /// it threw).
    private func write<T>(_ body: (Database) throws -> T) throws -> T {
        let (result, notes) = try store.write { db in
            state.withLock { $0.notes = [] }
            let result = try body(db)
            return (
                result,
                state.withLock { state in
                    defer { state.notes = [] }
                    return state.notes
                }
            )
        }
        if !notes.isEmpty {
            for watcher in state.withLock({ Array($0.watchers.values) }) {
                for activity in notes { watcher.yield(activity) }
            }
        }
        return result
    }

    // MARK: SQL

    /// The rows held that meet `query`, as shown (`overlay` on top), one more than its limit at
    /// most: every row the overlay does not hide among the first rows read, and the overlay's.
    private func entries(_ db: Database, _ query: RowQuery, overlay: [String: Row?]) throws -> [LiveResult<Row>.Entry] {
        let (sql, arguments) = select(query, beyondLimit: overlay.count)
        let decoder = JSONDecoder()
        var found: [LiveResult<Row>.Entry] = []
        let rows = try GRDB.Row.fetchCursor(db, sql: sql, arguments: arguments)
        while let stored = try rows.next() {
            let id: String = stored["id"]
            guard overlay[id] == nil else { continue }
            let row = try decoder.decode(Row.self, from: stored["json"] as Data)
            found.append(LiveResult.Entry(id: id, fields: declaration.fields(of: row), row: row))
        }
        for case (let id, let row?) in overlay {
            let fields = declaration.fields(of: row)
            if query.matches(fields) { found.append(LiveResult.Entry(id: id, fields: fields, row: row)) }
        }
        return found
    }

    /// The `SELECT` of `query`'s rows held (`id, json`), in its order: up to its limit and
    /// `beyondLimit` more, and one more again, which tells whether rows are left past the window.
    func select(_ query: RowQuery, beyondLimit: Int = 0) -> (sql: String, arguments: StatementArguments) {
        let (conditions, values) = query.sqliteConditions(reading: Self.expression)
        // Read through the query's own index (``index(_:_:)``), named: without statistics,
        // SQLite's planner takes the table's key (the collection, then the id) and sorts every
        // row of the collection for each read of a window (50 ms for 100,000 rows, at each page
        // of a first sync). The collection is written out (its name is letters, digits and
        // `-_.`), as the partial index says it, so that the index can serve the query.
        let source = query.fields.isEmpty ? "rows" : "rows INDEXED BY \"\(indexName(query.fields))\""
        var sql =
            "SELECT id, json FROM \(source) WHERE " + (["collection = '\(declaration.name)'"] + conditions).joined(separator: " AND ")
            + " ORDER BY " + query.sqliteOrder(reading: Self.expression, id: "id")
        if let limit = query.limit { sql += " LIMIT \(limit + 1 + beyondLimit)" }
        return (sql, StatementArguments(values.map(Self.argument)))
    }

    /// Makes the index that answers queries reading `fields`, once.
    private func index(_ db: Database, _ fields: [String]) throws {
        guard !fields.isEmpty, state.withLock({ $0.indexed.insert(fields).inserted }) else { return }
        let columns = (fields.map(Self.expression) + ["id"]).joined(separator: ", ")
        try db.execute(sql: "CREATE INDEX IF NOT EXISTS \"\(indexName(fields))\" ON rows (\(columns)) WHERE collection = '\(declaration.name)'")
    }

    /// The name of the index over `fields`.
    private func indexName(_ fields: [String]) -> String {
        "rows:\(declaration.name):\(fields.joined(separator: ","))"
    }

    private func confirmed(_ db: Database, _ id: String) throws -> VersionedRow<Row>? {
        guard
            let stored = try GRDB.Row.fetchOne(
                db.cachedStatement(sql: "SELECT epoch, counter, json FROM rows WHERE collection = ? AND id = ?"), arguments: [declaration.name, id])
        else { return nil }
        let version = Version(epoch: UInt64(bitPattern: stored["epoch"]), counter: UInt64(bitPattern: stored["counter"]))
        return VersionedRow(id: id, version: version, value: try JSONDecoder().decode(Row.self, from: stored["json"] as Data))
    }

    /// Takes the row `id` out of the subscription `key`; whether it left the device with it (no
    /// other subscription holds it), remembered as departed as of `departure` when given.
    private func leave(_ db: Database, _ key: String, _ id: String, remembered departure: (epoch: UInt64, position: UInt64)?) throws -> Bool {
        try db.cachedStatement(sql: "DELETE FROM members WHERE subscription = ? AND id = ?").execute(arguments: [key, id])
        guard try !isHeld(db, id) else { return false }
        if let departure {
            try db.cachedStatement(
                sql: """
                    INSERT OR REPLACE INTO departed (collection, id, epoch, counter, cookie_epoch, position)
                    SELECT collection, id, epoch, counter, ?, ? FROM rows WHERE collection = ? AND id = ?
                    """
            ).execute(arguments: [Int64(bitPattern: departure.epoch), Int64(bitPattern: departure.position), declaration.name, id])
        }
        try db.cachedStatement(sql: "DELETE FROM rows WHERE collection = ? AND id = ?").execute(arguments: [declaration.name, id])
        return true
    }

    /// Whether a subscription of the collection holds the row `id`: looked up by each
    /// subscription's key (the members' own key), where an index of the members by row would
    /// cost every row of a first sync a third write.
    private func isHeld(_ db: Database, _ id: String) throws -> Bool {
        try Bool.fetchOne(
            db.cachedStatement(
                sql: """
                    SELECT EXISTS (
                        SELECT 1 FROM subscriptions JOIN members ON members.subscription = subscriptions.key AND members.id = ?
                        WHERE subscriptions.collection = ?)
                    """), arguments: [id, declaration.name])
            ?? false
    }

    private static func expression(_ field: String) -> String {
        "json_extract(fields, '$.\(field)')"
    }

    private static func argument(_ value: FieldValue) -> (any DatabaseValueConvertible)? {
        switch value {
        case .null: nil
        case .integer(let number): number
        case .real(let number): number
        case .text(let text): text
        }
    }
}

/// A stored row's version.
private struct StoredVersion: FetchableRecord {
    let version: Version

    init(row: GRDB.Row) {
        version = Version(epoch: UInt64(bitPattern: row["epoch"]), counter: UInt64(bitPattern: row["counter"]))
    }
}

/// A change to rows the server refused, or one stored by an earlier version of the app that
/// this one no longer decodes: taken off the rows shown, reported once.
public struct RefusedRowMutation<M: RowMutation>: Sendable {
    /// The id it was sent with.
    public let id: MutationID
    /// The change; `nil` for a stored change that no longer decodes as `M`, whose ``error`` is
    /// a `DroppedMutation` that holds its JSON.
    public let mutation: M?
    /// What the server said, or why the change was dropped.
    public let message: String
    /// The error the sender threw (an `HTTPStatusError`, say), or the `DroppedMutation`.
    public let error: any Error
}
