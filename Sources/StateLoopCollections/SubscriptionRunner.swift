import StateLoopSync
import StateLoopWire

/// What keeps one subscription of a local collection synced, however many ``RowSubscription``s
/// share it (the collection runs one per key): a task that holds its socket, and its status.
///
/// Its socket opens with the cookie the store holds, so that its first message catches up from
/// there, however long the app was away. Each message is applied relative to the one before (or
/// to the socket's cookie): one the store cannot place (relative to another cookie) closes the
/// socket, and the next catches up. A socket the server refuses makes it fetch once to learn
/// why: a 404 (the query refuses the reader) takes the subscription's rows off the device, and
/// it tries again later, as access may come back.
final class SubscriptionRunner: Sendable {
    typealias Status = RowSubscription.Status

    /// The subscription's key, as its source names it.
    let key: String
    private let task = Locked<Task<Void, Never>?>(nil)
    private let current = Locked(Status.connecting)
    private let begin: @Sendable (SubscriptionRunner) -> Void

    init<Row, M>(source: RowSource<Row>, collection: LocalCollection<Row, M>) {
        key = source.key
        // Weakly: a stopped subscription that an app keeps must not keep the collection and its
        // store (and so the file) alive. The collection starts it while it lives.
        begin = { [weak collection] runner in
            if let collection { runner.run(source, collection) }
        }
    }

    /// Starts syncing, once.
    func start() {
        begin(self)
    }

    private func run<Row, M>(_ source: RowSource<Row>, _ collection: LocalCollection<Row, M>) {
        // Subscribed as the store closed (after it stopped the subscriptions): nothing to run.
        guard !collection.store.isClosed else { return }
        let key = key
        try? collection.record(key)
        let client = collection.store.clientID
        let (policy, clock, store) = (collection.store.policy, collection.store.clock, collection.store)
        // Every change of status goes through here, so that an inspector sees each once.
        let current = current
        let change: @Sendable (@escaping @Sendable (Status) -> Status) -> Void = { [weak collection] next in
            let (old, new) = current.withLock { status in
                let old = status
                status = next(old)
                return (old, status)
            }
            if old != new { collection?.announce(subscription: key) { .status(new) } }
        }
        task.withLock {
            $0 = Task {
                // Restarts in a row without a message applied: each waits the policy's backoff,
                // so that a message that can never be read or placed (a row the app's type no
                // longer decodes) costs a reconnection per backoff, not a loop.
                let restarts = Locked(0)
                while !Task.isCancelled && !store.isClosed {
                    // A first sync comes over HTTP, whose body streams: a socket's first message
                    // is one frame, which a large result would hold up past the server's
                    // patience for a reader that does not read. The socket then opens from its
                    // cookie. Asked again at each opening while no cookie is held (a first
                    // launch offline, a server busy).
                    if collection.cookie(of: key) == nil {
                        await Self.ask(source, client: client, collection: collection, key: key, change: change)
                    }
                    let restart = Locked(false)
                    let handle = Locked<Task<Void, Never>?>(nil)
                    let again: @Sendable () -> Void = {
                        restart.withLock { $0 = true }
                        handle.withLock { $0?.cancel() }
                    }
                    let socket = Task {
                        // The cookie the next message is relative to: the socket's, then each
                        // message's; `nil` while no socket is open.
                        let expected = Locked<String??>(nil)
                        await source.push(client, { collection.cookie(of: key) }) { event in
                            switch event {
                            case .opened(let cookie):
                                expected.withLock { $0 = .some(cookie) }
                                change { _ in .live }
                            case .difference(let difference):
                                guard case .some(let relative) = expected.withLock({ $0 }) else { return }
                                let outcome = try? collection.apply(difference, requestedWith: relative, to: key)
                                expected.withLock { $0 = .some(difference.cookie) }
                                if outcome == .applied { restarts.withLock { $0 = 0 } }
                                if outcome == .needsCatchUp || outcome == nil { again() }
                            case .closed:
                                expected.withLock { $0 = nil }
                                change { $0 == .live ? .connecting : $0 }
                                // Still no cookie: the next opening asks over HTTP first (after
                                // the backoff), rather than the socket bringing the whole result.
                                if collection.cookie(of: key) == nil { again() }
                            case .refused:
                                await Self.ask(source, client: client, collection: collection, key: key, change: change)
                            case .unreadable:
                                again()
                            }
                        }
                    }
                    handle.withLock { $0 = socket }
                    if restart.withLock({ $0 }) { socket.cancel() }
                    await withTaskCancellationHandler {
                        await socket.value
                    } onCancel: {
                        socket.cancel()
                    }
                    // Ended by a message it could not place: opened again from the cookie held,
                    // after the backoff. Otherwise the source ran until cancelled.
                    if !restart.withLock({ $0 }) { return }
                    let attempt = restarts.withLock { count in
                        count += 1
                        return count
                    }
                    if attempt > 1 {
                        do {
                            try await clock.sleep(for: policy.jitter(policy.backoff(beforeRetry: attempt - 1)))
                        } catch {
                            return
                        }
                    }
                }
            }
        }
    }

    /// Where the subscription stands now.
    var status: Status {
        current.withLock { $0 }
    }

    /// Stops syncing.
    func cancel() {
        task.withLock { $0?.cancel() }
    }

    deinit {
        task.withLock { $0?.cancel() }
    }

    /// Fetches once (the first sync, or after the server refused the socket, to learn why): the
    /// answer is applied, and a 404 takes the rows off. An answer after a refusal means the
    /// reader may read again: connecting, until the socket opens.
    private static func ask<Row, M>(
        _ source: RowSource<Row>, client: ClientID, collection: LocalCollection<Row, M>, key: String,
        change: @Sendable (@escaping @Sendable (Status) -> Status) -> Void
    ) async {
        let held = collection.cookie(of: key)
        do {
            if held == nil, let page = source.page {
                try await pages(page, client: client, collection: collection, key: key)
            } else {
                let answer = try await source.fetch(held, client)
                try collection.apply(answer, requestedWith: held, to: key)
            }
            change { $0 == .refused ? .connecting : $0 }
        } catch let error as HTTPStatusError where error.status == 404 {
            try? collection.drop(key, refused: true)
            change { _ in .refused }
        } catch {}
    }

    /// Fetches the whole result page by page and applies each as it comes, the next page asked
    /// for while this one is written: the server reads and sends one while the device stores
    /// the other. Ends at the last page, or at a page the store set aside (another answer came
    /// first); throws what a fetch threw, the pages stored so far kept (the next attempt asks for
    /// every page again).
    private static func pages<Row, M>(
        _ page: @escaping @Sendable (String?, ClientID) async throws -> RowsDifference<Row>, client: ClientID,
        collection: LocalCollection<Row, M>, key: String
    ) async throws {
        typealias Page = (RowsDifference<Row>, PreparedRows)
        let fetching = Locked<Task<Page, any Error>?>(nil)
        try await withTaskCancellationHandler {
            // However this ends, no page is left being fetched.
            defer { fetching.withLock { $0?.cancel() } }
            var sync = PagedSync()
            // Each page is fetched, decoded and prepared for the store (its rows' fields) on the
            // tasks' threads while the page before it is written apart.
            let fetch: @Sendable (String?) async throws -> Page = { after in
                let answer = try await page(after, client)
                return (answer, collection.prepare(answer))
            }
            var next = Task { try await fetch(nil) }
            fetching.withLock { $0 = next }
            var after: String?
            while true {
                let (answer, prepared) = try await next.value
                try Task.checkCancellation()
                // Pages go forward: a server that names a page at or before this one's would
                // loop. Its last page is then never taken; the socket brings the whole result.
                let forward = answer.next.map { next in after.map { $0.utf8.lexicographicallyPrecedes(next.utf8) } ?? true } ?? true
                guard forward else { return }
                if let start = answer.next {
                    next = Task { try await fetch(start) }
                    fetching.withLock { $0 = next }
                }
                after = answer.next
                // Written apart from the tasks' threads, which meanwhile fetch the next page.
                let before = sync
                let (outcome, advanced) = try await collection.store.writingApart {
                    var sync = before
                    return (try collection.apply(page: answer, of: &sync, to: key, prepared: prepared), sync)
                }
                sync = advanced
                guard outcome == .applied, answer.next != nil else { return }
            }
        } onCancel: {
            fetching.withLock { $0?.cancel() }
        }
    }
}
