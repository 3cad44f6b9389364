import NightrideServer
import StateLoopServer
import Synchronization

#if PostgreSQL
    import StateLoopServerPostgres
#endif

/// What a Nightride server held, read from its stores' change feeds when a check asks for it
/// (never on the server's writer as it commits): the truth the demo, the chaos runs and the
/// tests compare clients with.
///
/// It is told of each store the server opens. A data file or a database carries the feed of the
/// store before it (a restart opens the same history again); a store in memory starts a feed of
/// its own, and the one it replaces is read to its end first. Each read goes on from where the
/// last stopped, and reads never overlap, so an entry is logged once. The feeds must not be
/// pruned (``NightrideServer/Configuration/changeRetention`` `nil`, the default).
public final class TruthReader: Sendable {
    /// Feed times become times since this (a time since 1970).
    private let origin: Duration
    /// The stores opened, oldest first, not yet taken into `feeds`.
    private let opened = Mutex<[any ServerStore]>([])
    private let reading: Reading

    /// A reader whose change-log times are since `origin`, a time since 1970 (a server's
    /// ``NightrideServer/wallOrigin``, or the wall clock when a process began watching another).
    public init(origin: Duration) {
        self.origin = origin
        reading = Reading()
    }

    /// A reader of the data file at `dataPath`, which a server in another process writes (and
    /// may be killed and started on again): what a chaos run checks its clients against.
    public convenience init(dataPath: String, origin: Duration) throws {
        self.init(origin: origin)
        opened(try SQLiteStore(path: dataPath))
    }

    /// Takes `store` as the newest: the server opened it, and commits go to it from now on.
    public func opened(_ store: any ServerStore) {
        opened.withLock { $0.append(store) }
    }

    /// The truth as the stores hold it now.
    public func truth() async throws -> ServerTruth {
        let newStores = opened.withLock { stores in
            defer { stores = [] }
            return stores
        }
        return try await reading.truth(adding: newStores, origin: origin)
    }

    /// The wall clock as a time since 1970, the basis of every stored time.
    public static var wallClockNow: Duration {
        WallTime.of(.now)
    }

    /// The reading itself, one call at a time: an actor, with each call waiting for the one
    /// before it, since a read awaits its store and another call must not read the same feed
    /// meanwhile.
    private actor Reading {
        /// The feeds still to follow, oldest first; only the last can grow.
        private var feeds: [any ServerStore] = []
        private var history = ServerHistory()
        private var previous: Task<ServerTruth, any Error>?

        func truth(adding stores: [any ServerStore], origin: Duration) async throws -> ServerTruth {
            let before = previous
            let task = Task {
                _ = await before?.result
                return try await self.read(adding: stores, origin: origin)
            }
            previous = task
            return try await task.value
        }

        private func read(adding stores: [any ServerStore], origin: Duration) async throws -> ServerTruth {
            for store in stores {
                if let last = feeds.last, Self.continuesFeed(of: last, with: store) {
                    feeds[feeds.count - 1] = store
                } else {
                    feeds.append(store)
                }
            }
            while let feed = feeds.first {
                while true {
                    let entries = try await feed.changes(after: history.feedPosition, limit: 5_000)
                    guard !entries.isEmpty else { break }
                    history.record(entries, origin: origin)
                }
                for client in try await Self.progress(in: feed) { history.audit.noteProgress(client) }
                // A feed with a newer one after it is over: read to its end, then dropped.
                guard feeds.count > 1 else { break }
                feeds.removeFirst()
                history.feedPosition = 0
            }
            return ServerTruth(changeLog: history.changeLog, catalog: PlaceCatalog(), audit: history.audit)
        }

        /// Whether `next` reads on from where `store`'s feed is: the same file or database,
        /// opened again. A store in memory has a feed of its own.
        private static func continuesFeed(of store: any ServerStore, with next: any ServerStore) -> Bool {
            switch (store, next) {
            case (let store as SQLiteStore, let next as SQLiteStore): store.path != nil && store.path == next.path
            #if PostgreSQL
                case (is PostgresStore, is PostgresStore): true
            #endif
            default: false
            }
        }

        /// How far each client's mutations were processed, as `store` has it.
        private static func progress(in store: any ServerStore) async throws -> [ClientProgress] {
            switch store {
            case let store as SQLiteStore: try store.clientProgress()
            #if PostgreSQL
                case let store as PostgresStore: try await store.clientProgress()
            #endif
            default: []
            }
        }
    }
}
