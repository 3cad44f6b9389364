import Foundation
import PostgresNIO
import StateLoopServer
import StateLoopServerPostgres
import StateLoopWire
import Synchronization
import TestSupport
import Testing

/// What the PostgreSQL store adds to the shared store suite (`StoreTests`): several stores, as
/// several server instances would hold them, on one database.
@Suite("PostgreSQL store", .timeLimit(.minutes(5)), .enabled(if: StoreKind.postgresTestsEnabled, "STATELOOP_POSTGRES_TESTS=0"))
struct PostgresStoreTests {
    let key = ResourceKey(resource: "board", id: "main")

    @Test("two stores on one database share the epoch; writers of one key on both get one counter each, none twice")
    func twoInstancesOneCounter() async throws {
        try await withPostgres { url in
            let stores = [
                try await openingPatiently { try await PostgresStore(url: url, deadline: hangGuard) },
                try await openingPatiently { try await PostgresStore(url: url, deadline: hangGuard) },
            ]
            #expect(stores[0].epoch == stores[1].epoch)
            let versions = try await withThrowingTaskGroup(of: UInt64.self) { group in
                for index in 0..<40 {
                    group.addTask { try await stores[index % 2].write { try $0.write(Data("\(index)".utf8), to: key) }.counter }
                }
                return try await group.reduce(into: [UInt64]()) { $0.append($1) }
            }
            #expect(versions.sorted() == Array(1...40))
        }
    }

    @Test("the same mutation id sent to two stores at once runs once: the later one waits and finds the answer")
    func sameMutationOnTwoInstances() async throws {
        try await withPostgres { url in
            let stores = [
                try await openingPatiently { try await PostgresStore(url: url, deadline: hangGuard) },
                try await openingPatiently { try await PostgresStore(url: url, deadline: hangGuard) },
            ]
            let answer = RememberedAnswer(fingerprint: 1, status: 200, body: Data("{}".utf8))
            let runs = try await withThrowingTaskGroup(of: Bool.self) { group in
                for index in 0..<20 {
                    group.addTask {
                        try await stores[index % 2].write { transaction in
                            guard try transaction.answer(to: "c:1", scope: "ann") == nil else { return false }
                            _ = try transaction.write(Data("1".utf8), to: key)
                            try transaction.remember(answer, to: "c:1", scope: "ann", client: ClientID(rawValue: "c"), sequence: 1)
                            return true
                        }
                    }
                }
                return try await group.reduce(into: 0) { $0 += $1 ? 1 : 0 }
            }
            #expect(runs == 1)
            let stored = try await stores[1].read(key, lastMutationIDOf: nil, scope: "ann")
            #expect(stored.value?.version.counter == 1)
        }
    }

    @Test("a database left by another store opens with the same epoch and values; its schema is not created twice")
    func reopened() async throws {
        try await withPostgres { url in
            let epoch: UInt64
            do {
                let first = try await openingPatiently { try await PostgresStore(url: url, deadline: hangGuard) }
                epoch = first.epoch
                _ = try await first.write { try $0.write(Data("7".utf8), to: key) }
            }
            let second = try await openingPatiently { try await PostgresStore(url: url, deadline: hangGuard) }
            #expect(second.epoch == epoch)
            let read = try await second.read(key, lastMutationIDOf: nil, scope: "")
            #expect(read.value?.json == Data("7".utf8))
        }
    }

    @Test("commits made on either of two stores reach the observers of both, each once, every key's versions in order")
    func commitsReachEveryInstance() async throws {
        try await withPostgres { url in
            let stores = [
                try await openingPatiently { try await PostgresStore(url: url, deadline: hangGuard) },
                try await openingPatiently { try await PostgresStore(url: url, deadline: hangGuard) },
            ]
            let heard = [CommitLog(), CommitLog()]
            for (store, log) in zip(stores, heard) { store.observeCommits { log.append($0) } }
            try await withThrowingTaskGroup(of: Void.self) { group in
                for index in 0..<60 {
                    group.addTask {
                        let key = ResourceKey(resource: "board", id: "k\(index % 3)")
                        _ = try await stores[index % 2].write { try $0.write(Data("\(index)".utf8), to: key) }
                    }
                }
                try await group.waitForAll()
            }
            for log in heard {
                let complete = await eventually(within: .seconds(20)) { log.values.count == 60 }
                #expect(complete, "an observer heard \(log.values.count) of 60 commits")
                for id in ["k0", "k1", "k2"] {
                    let versions = log.values.filter { $0.key.id == id }.map(\.version.counter)
                    #expect(versions == Array(1...20), "\(id)'s versions arrived as \(versions)")
                }
            }
        }
    }

    @Test("a client's progress committed without a value (a refused mutation) reaches the other instance's observers")
    func progressReachesEveryInstance() async throws {
        try await withPostgres { url in
            let stores = [
                try await openingPatiently { try await PostgresStore(url: url, deadline: hangGuard) },
                try await openingPatiently { try await PostgresStore(url: url, deadline: hangGuard) },
            ]
            let heard = CommitLog()
            stores[1].observeCommits { heard.append($0) }
            let cause = ChangeCause(scope: "ann", mutation: MutationID(rawValue: "c:4"))
            _ = try await stores[0].write { transaction in
                transaction.cause = cause
                try transaction.setLastMutationID(4, of: ClientID(rawValue: "c"), scope: "ann")
            }
            let arrived = await eventually(within: .seconds(20)) { !heard.all.isEmpty }
            #expect(arrived, "the other store heard nothing")
            let commit = try #require(heard.all.first)
            #expect(commit.progress == [ClientProgress(scope: "ann", client: ClientID(rawValue: "c"), lastMutationID: 4)])
            #expect(commit.cause == cause && commit.values.isEmpty && commit.feed == nil)
        }
    }

    @Test("an instance whose listening connection is cut while others commit hears every commit once it listens again, in order")
    func listenerCutCatchesUp() async throws {
        try await withPostgres { url in
            let (writer, follower) = (
                try await openingPatiently { try await PostgresStore(url: url, deadline: hangGuard) },
                try await openingPatiently { try await PostgresStore(url: url, deadline: hangGuard) }
            )
            let heard = CommitLog()
            follower.observeCommits { heard.append($0) }
            _ = try await writer.write { try $0.write(Data("0".utf8), to: key) }
            #expect(await eventually(within: .seconds(20)) { heard.values.count == 1 }, "the first commit did not arrive")
            // Cut every listening connection (the writer's too), then commit while they are down.
            try await terminateListeners()
            for index in 1...10 {
                _ = try await writer.write { try $0.write(Data("\(index)".utf8), to: key) }
            }
            let complete = await eventually(within: .seconds(20)) { heard.values.count == 11 }
            #expect(complete, "after the cut the follower heard \(heard.values.count - 1) of 10 commits")
            #expect(heard.values.map(\.version.counter) == Array(1...11))
        }
    }

    @Test("a commit with more entries than a catch-up's page reaches the other instance whole, as one commit")
    func largeCommitArrivesWhole() async throws {
        try await withPostgres { url in
            let stores = [
                try await openingPatiently { try await PostgresStore(url: url, deadline: hangGuard) },
                try await openingPatiently { try await PostgresStore(url: url, deadline: hangGuard) },
            ]
            let heard = CommitLog()
            stores[1].observeCommits { heard.append($0) }
            _ = try await stores[0].write { transaction in
                for index in 0..<1_200 { _ = try transaction.write(Data("\(index)".utf8), to: ResourceKey(resource: "row", id: "\(index)")) }
            }
            _ = try await stores[0].write { try $0.write(Data("after".utf8), to: key) }
            #expect(await eventually(within: .seconds(20)) { heard.all.count == 2 }, "heard \(heard.all.count) of 2 commits")
            #expect(heard.all.first?.values.count == 1_200)
            #expect(heard.all.last?.values.map(\.key) == [key])
        }
    }

    @Test("a commit of 17,000 values, more than one statement's parameters can carry, commits and reaches the other instance whole")
    func commitBeyondOneStatement() async throws {
        try await withPostgres { url in
            let stores = [
                try await openingPatiently { try await PostgresStore(url: url, deadline: hangGuard) },
                try await openingPatiently { try await PostgresStore(url: url, deadline: hangGuard) },
            ]
            let heard = CommitLog()
            stores[1].observeCommits { heard.append($0) }
            _ = try await stores[0].write { transaction in
                for index in 0..<17_000 { _ = try transaction.write(Data("\(index)".utf8), to: ResourceKey(resource: "cell", id: "\(index)")) }
            }
            #expect(await eventually(within: .seconds(30)) { heard.all.count == 1 }, "heard \(heard.all.count) of 1 commit")
            #expect(heard.all.first?.values.count == 17_000)
            #expect(heard.all.first?.values.last?.json == Data("16999".utf8))
        }
    }

    @Test("while the database is down every request fails within the deadline; once it is back, writes commit and reach the other instance")
    func databaseAwayAndBack() async throws {
        guard postgresIsInstalled() else { return }
        // A server of its own: this test stops it.
        let server = try await ThrowawayPostgres.start()
        do {
            let url = "postgres://\(server.user)@127.0.0.1:\(server.port)/\(try await server.createDatabase("away"))"
            let (writer, follower) = (
                try await openingPatiently { try await PostgresStore(url: url, deadline: .seconds(1)) },
                try await openingPatiently { try await PostgresStore(url: url, deadline: .seconds(1)) }
            )
            let heard = CommitLog()
            follower.observeCommits { heard.append($0) }
            _ = try await writer.write { try $0.write(Data("before".utf8), to: key) }
            try await server.pause()
            // The deadline is 1 s; without one, a request would wait until the database is back,
            // which it is not until this check ends: 30 s is a hang guard (CI saw 4.4 s beside
            // the parallel suite and two CPU hogs).
            await expectEachRequestFails(on: writer, within: .seconds(30), "while the database is down")
            try await server.resume()
            let committed = await eventually(within: .seconds(20)) {
                do {
                    _ = try await writer.write { try $0.write(Data("after".utf8), to: key) }
                    return true
                } catch {
                    try? await Task.sleep(for: .milliseconds(100))
                    return false
                }
            }
            #expect(committed, "no write committed once the database was back")
            let arrived = await eventually(within: .seconds(20)) { heard.values.last?.json == Data("after".utf8) }
            #expect(arrived, "the other instance did not hear the commit made once the database was back")
        } catch {
            await server.stop()
            throw error
        }
        await server.stop()
    }

    @Test("a database that stops answering (its tables locked by another session) fails each request within the deadline, then serves again")
    func stalledDatabase() async throws {
        guard postgresIsInstalled() else { return }
        let server = try await ThrowawayPostgres.shared()
        let database = try await server.createDatabase(ThrowawayPostgres.newDatabaseName())
        let store = try await openingPatiently {
            try await PostgresStore(url: "postgres://\(server.user)@127.0.0.1:\(server.port)/\(database)", deadline: .milliseconds(500))
        }
        let board = key
        // A 500 ms deadline per statement: beside two CPU hogs a healthy write can miss it too,
        // so the writes around the stall are retried (bounded); the stall's own are not.
        let before = try await writeRetryingUnanswered(Data("before".utf8), to: board, on: store)
        let holder = Task {
            try await server.execute(
                "BEGIN; LOCK TABLE stateloop_values IN ACCESS EXCLUSIVE MODE; SELECT pg_sleep(10); COMMIT;", in: database
            )
        }
        // Until the other session holds the lock (a fixed pause lets requests through first on
        // a slow machine).
        let locked =
            "DO $$ BEGIN IF NOT EXISTS (SELECT 1 FROM pg_locks l JOIN pg_class c ON c.oid = l.relation "
            + "WHERE c.relname = 'stateloop_values' AND l.mode = 'AccessExclusiveLock' AND l.granted) THEN RAISE EXCEPTION 'not yet'; END IF; END $$;"
        let deadline = ContinuousClock.now + .seconds(10)
        while (try? await server.execute(locked, in: database)) == nil {
            guard ContinuousClock.now < deadline else {
                Issue.record("the other session never took the lock")
                return
            }
            try await Task.sleep(for: .milliseconds(20))
        }
        // The store's deadline and PostgreSQL's statement_timeout (set to the same value) race:
        // either may end the request first, and both say the database did not answer in time.
        // A request may wait a deadline in the writer's queue and one for its blocked statement:
        // 5 s leaves a loaded machine room (CI saw 2.6 s beside the parallel suite and two CPU
        // hogs) and is half the lock's 10 s, which a request without a deadline would wait.
        await expectEachRequestFails(on: store, within: .seconds(5), "on a stalled database", accepted: isUnanswered)
        try await holder.value
        let written = try await writeRetryingUnanswered(Data("after".utf8), to: board, on: store)
        #expect(written.counter == before.counter + 1, "the stalled write committed after all, or the store lost a version")
    }

    @Test("pruning keeps a commit whole across values and progress: a newer commit with progress only does not take the older one's progress")
    func pruningKeepsCommitsWhole() async throws {
        guard postgresIsInstalled() else { return }
        let server = try await ThrowawayPostgres.shared()
        let database = try await server.createDatabase(ThrowawayPostgres.newDatabaseName())
        let clock = Mutex(Date(timeIntervalSince1970: 1_000))
        let store = try await openingPatiently {
            try await PostgresStore(url: "postgres://\(server.user)@127.0.0.1:\(server.port)/\(database)", now: { clock.withLock { $0 } })
        }
        let client = ClientID(rawValue: "c")
        // A commit with a value and the client's progress, then one with progress only.
        _ = try await store.write { transaction in
            try transaction.setLastMutationID(4, of: client, scope: "ann")
            return try transaction.write(Data("1".utf8), to: key)
        }
        clock.withLock { $0 = Date(timeIntervalSince1970: 2_000) }
        try await store.write { try $0.setLastMutationID(5, of: client, scope: "ann") }
        let withValue = try #require(try await store.changes(after: 0, limit: 10).last?.commit)

        #expect(try await store.forgetChanges(committedBefore: Date(timeIntervalSince1970: 10_000)) == 0)
        // The commit with the value is the newest in the values' table: its progress stays too.
        let progressKept =
            "DO $$ BEGIN IF NOT EXISTS (SELECT 1 FROM stateloop_progress WHERE commit_seq = \(withValue)) "
            + "THEN RAISE EXCEPTION 'the progress of commit \(withValue) was pruned, its value kept'; END IF; END $$;"
        await #expect(throws: Never.self) { try await server.execute(progressKept, in: database) }
    }

    @Test("read-modify-writes of one key from two stores, four writers each, all at once: none is lost, from the key's creation on")
    func noLostUpdates() async throws {
        try await withPostgres { url in
            let stores = [
                try await openingPatiently { try await PostgresStore(url: url, deadline: hangGuard) },
                try await openingPatiently { try await PostgresStore(url: url, deadline: hangGuard) },
            ]
            let counter = ResourceKey(resource: "counter", id: "shared")
            try await withThrowingTaskGroup(of: Void.self) { group in
                for index in 0..<60 {
                    group.addTask {
                        _ = try await stores[index % 2].write { transaction in
                            let current = try transaction.value(of: counter).flatMap { Int(String(decoding: $0.json, as: UTF8.self)) } ?? 0
                            return try transaction.write(Data("\(current + 1)".utf8), to: counter)
                        }
                    }
                }
                try await group.waitForAll()
            }
            let stored = try await stores[0].read(counter, lastMutationIDOf: nil, scope: "")
            #expect(stored.value.map { String(decoding: $0.json, as: UTF8.self) } == "60", "increments were lost")
            #expect(stored.value?.version.counter == 60)
        }
    }

    @Test("a blind write of a key that another transaction read while it had no row waits for that transaction: the reader's write comes first")
    func blindWriteWaitsForReaderOfMissingKey() async throws {
        try await withPostgres { url in
            let stores = [
                try await openingPatiently { try await PostgresStore(url: url, deadline: hangGuard) },
                try await openingPatiently { try await PostgresStore(url: url, deadline: hangGuard) },
            ]
            let key = ResourceKey(resource: "seat", id: "12A")
            let readerHoldsIt = DispatchSemaphore(value: 0)
            let reader = Task {
                try await stores[0].write { transaction in
                    let before = try transaction.value(of: key)
                    readerHoldsIt.signal()
                    // The blind writer starts meanwhile; it must not slip in before this write.
                    Thread.sleep(forTimeInterval: 0.3)
                    return (before == nil, try transaction.write(Data("reader".utf8), to: key))
                }
            }
            await withCheckedContinuation { continuation in
                DispatchQueue.global().async {
                    readerHoldsIt.wait()
                    continuation.resume()
                }
            }
            let blind = try await stores[1].write { transaction in try transaction.write(Data("blind".utf8), to: key) }
            let (sawNothing, readerVersion) = try await reader.value
            #expect(sawNothing)
            #expect(readerVersion.counter == 1, "the reader saw no row, so its write must create the key")
            #expect(blind.counter == 2)
            let stored = try await stores[0].read(key, lastMutationIDOf: nil, scope: "")
            #expect(stored.value.map { String(decoding: $0.json, as: UTF8.self) } == "blind")
        }
    }

    @Test("two writes taking two keys in opposite orders at once: PostgreSQL picks a deadlock's victim, which runs again, and both commit")
    func deadlockVictimRunsAgain() async throws {
        try await withPostgres { url in
            let store = try await openingPatiently { try await PostgresStore(url: url, writers: 2) }
            let (first, second) = (ResourceKey(resource: "board", id: "a"), ResourceKey(resource: "board", id: "b"))
            let runs = RunCount()
            let holding = RunCount()
            try await withThrowingTaskGroup(of: Void.self) { group in
                for keys in [(first, second), (second, first)] {
                    group.addTask {
                        _ = try await store.write { transaction in
                            runs.count.withLock { $0 += 1 }
                            do {
                                _ = try transaction.write(Data("1".utf8), to: keys.0)
                                // Both hold their first key before either asks for its second: a
                                // barrier, not a pause, so that a slow start cannot avoid the
                                // deadlock (the victim's second run passes it at once).
                                holding.count.withLock { $0 += 1 }
                                let deadline = Date().addingTimeInterval(10)
                                while holding.count.withLock({ $0 }) < 2, Date() < deadline {
                                    Thread.sleep(forTimeInterval: 0.005)
                                }
                                return try transaction.write(Data("2".utf8), to: keys.1)
                            } catch {
                                // As the kit's own transactions do: the store's error wrapped.
                                throw WrappedError(underlying: error)
                            }
                        }
                    }
                }
                try await group.waitForAll()
            }
            #expect(runs.count.withLock { $0 } == 3, "one body ran again after the deadlock, no other did")
            let (a, b) = (
                try await store.read(first, lastMutationIDOf: nil, scope: ""), try await store.read(second, lastMutationIDOf: nil, scope: "")
            )
            #expect(a.value?.version.counter == 2 && b.value?.version.counter == 2)
        }
    }

    @Test("a URL that is not postgres://user@host/database is refused with a message that says how to write one")
    func badURL() async throws {
        let error = await #expect(throws: PostgresStore.BadURL.self) {
            try await openingPatiently { try await PostgresStore(url: "mysql://x@127.0.0.1/db") }
        }
        #expect(String(describing: error).contains("postgres://user[:password]@host[:port]/database"))
    }
}

/// Ends every connection to the shared test server that listens for the change feed, as a
/// network cut or a restarted proxy would.
private func terminateListeners() async throws {
    try await ThrowawayPostgres.shared().execute(
        "SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE query LIKE 'LISTEN%' AND pid <> pg_backend_pid()"
    )
}

/// How many times a transaction body ran.
private final class RunCount: Sendable {
    let count = Mutex(0)
}

/// Sends `store` a write, a read and a read in a transaction of `board/main`: each must fail, with
/// an error `accepted` takes (any, by default), in less than `limit`.
private func expectEachRequestFails(
    on store: PostgresStore, within limit: Duration, _ situation: String, accepted: @escaping @Sendable (any Error) -> Bool = { _ in true }
) async {
    let board = ResourceKey(resource: "board", id: "main")
    let requests: [(String, @Sendable () async throws -> Void)] = [
        ("write", { _ = try await store.write { try $0.write(Data("refused".utf8), to: board) } }),
        ("read", { _ = try await store.read(board, lastMutationIDOf: nil, scope: "") }),
        ("read in a transaction", { _ = try await store.read { try $0.value(of: board) } }),
    ]
    // At once, each timed on its own: in a row, the last would start late on a loaded machine.
    await withTaskGroup(of: Void.self) { group in
        for (name, request) in requests {
            group.addTask {
                let started = ContinuousClock.now
                // Never awaited past the limit: a request without a deadline would hang the test.
                guard let outcome = await outcome(of: request, within: limit) else {
                    Issue.record("a \(name) was still waiting after \(limit) \(situation)")
                    return
                }
                let waited = ContinuousClock.now - started
                switch outcome {
                case .success:
                    Issue.record("a \(name) succeeded \(situation)")
                case .failure(let error):
                    #expect(accepted(error), "a \(name) failed with \(error) \(situation)")
                }
                #expect(waited < limit, "a \(name) waited \(waited) \(situation)")
            }
        }
    }
}

/// Writes `json` to `key`, again while the store says the database did not answer in time, for
/// at most 20 s. (A write given up on at its very commit may have committed: then the retry
/// commits a second version, which a caller comparing counters sees.)
@discardableResult
private func writeRetryingUnanswered(_ json: Data, to key: ResourceKey, on store: PostgresStore) async throws -> Version {
    let deadline = ContinuousClock.now + .seconds(20)
    while true {
        do {
            return try await store.write { try $0.write(json, to: key) }
        } catch let error where ContinuousClock.now < deadline && isUnanswered(error) {
            try await Task.sleep(for: .milliseconds(50))
        }
    }
}

/// Whether `error` says the database did not answer in time: the store's deadline, or
/// PostgreSQL's `statement_timeout` (set to the same value), whichever ended the request first.
private func isUnanswered(_ error: any Error) -> Bool {
    error is PostgresStore.Unanswered || (error as? PSQLError)?.serverInfo?[.sqlState] == "57014"
}

/// `request`'s outcome, or `nil` once `limit` passed first (the request is then cancelled and
/// left to end by itself: its task is not awaited).
private func outcome(of request: @escaping @Sendable () async throws -> Void, within limit: Duration) async -> Result<Void, any Error>? {
    let call = Task { try await request() }
    let first = FirstAnswer()
    return await withCheckedContinuation { continuation in
        first.wait(continuation)
        Task { first.answer(await call.result) }
        Task {
            try? await Task.sleep(for: limit)
            if first.answer(nil) { call.cancel() }
        }
    }
}

/// Resumes one waiting continuation with whichever answer comes first.
private final class FirstAnswer: Sendable {
    private let waiting = Mutex<CheckedContinuation<Result<Void, any Error>?, Never>?>(nil)

    func wait(_ continuation: CheckedContinuation<Result<Void, any Error>?, Never>) {
        waiting.withLock { $0 = continuation }
    }

    /// `true` if this answer was the first.
    @discardableResult
    func answer(_ answer: Result<Void, any Error>?) -> Bool {
        guard let continuation = waiting.withLock({ $0.take() }) else { return false }
        continuation.resume(returning: answer)
        return true
    }
}

/// An error that hides the store's, as `ServerTransaction` wraps store errors.
private struct WrappedError: Error {
    let underlying: any Error
}

/// The deadline of the stores of tests that are not about deadlines: a hang guard, generous
/// for a loaded machine (the default, 5 s, was missed by a queue of 60 writers beside two CPU
/// hogs), not the product's figure.
let hangGuard: Duration = .seconds(60)

/// Opens a store with `open`, again while the throwaway server does not answer within the
/// store's opening deadline (10 s): beside CPU hogs it once took longer, and these tests are
/// about what the store does once open. At most 5 attempts; a refusal with a reason is thrown
/// at once.
func openingPatiently(_ open: () async throws -> PostgresStore) async throws -> PostgresStore {
    var attempt = 1
    while true {
        do {
            return try await open()
        } catch let failure as PostgresStore.OpenFailure where failure.description.contains("did not answer") && attempt < 5 {
            attempt += 1
        }
    }
}
