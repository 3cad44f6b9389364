import Foundation
import Hummingbird
import Logging
import NightrideModel
import ServiceLifecycle
import StateLoopInspector
import StateLoopInspectorSyncServer
import StateLoopServer
import StateLoopWire
import Synchronization

#if PostgreSQL
    import StateLoopServerPostgres
#endif

/// The Nightride backend on StateLoopServer: the ride rules (``RideOperation``) run in the
/// store's transactions, its two per-user values served over `GET` and push sockets with
/// idempotent mutations, sign-in, places and history as routes of its own, and an inactivity
/// timer; runnable in-process.
///
/// ```swift
/// let server = NightrideServer(configuration: .init(dataPath: "nightride.sqlite"))
/// let port = try await server.start()           // http://127.0.0.1:<port>
/// …
/// await server.stop()
/// ```
///
/// What watches and disturbs it in the demo, the chaos runs and the tests (faults, counters,
/// the truth clients are checked against) is NightrideHarness's, attached through ``Hooks``.
///
/// Its data lives in a ``Configuration/dataPath`` file, which a restart keeps, or in memory,
/// which a restart loses (as a process with its data in memory would). Every change, whether
/// from a request, the timer or a server-side call, is committed with its versions and pushed
/// by the kit to the affected sockets in version order.
public final class NightrideServer: Sendable {
    /// The configuration the server was made with.
    public let configuration: Configuration
    let logger: Logger
    /// What a harness attached.
    let hooks: Hooks
    /// What runs the application, the sync server and the inactivity timer: made at the first
    /// use, since what it launches needs the server.
    private let hosting = Mutex<SyncHost?>(nil)
    /// The store and the sync server on it, made at the first start.
    private let data = Mutex<DataLife?>(nil)
    /// Failed sign-ins per account and per address.
    let loginLimits: SignInLimits
    let rules: RideRules
    private let readClock: @Sendable () -> Duration
    let sleep: @Sendable (Duration) async throws -> Void
    /// The wall clock when the server's time began: stored times (drivers' idle times, session
    /// expiries) are on the wall clock, so that they mean the same after a restart. Every time
    /// the store records is this plus the server's ``now`` at the time.
    package let wallOrigin: Duration
    /// The wall clock as the server's clock moves it, from ``wallOrigin``: what the kit's
    /// sessions and the inactivity timer read, so that they and the rules agree on the time.
    let wallClock: WallClock
    /// A store given to this instance, which outlives it (a simulation's crash of the server's
    /// process); `nil`: the configuration's.
    private let givenStore: (any ServerStore)?

    /// A server whose time and timers run on `clock` (a test clock, say): the store's times, the
    /// inactivity timer and session lifetimes all follow it.
    public convenience init<C: Clock>(
        configuration: Configuration = Configuration(),
        clock: C,
        logger: Logger = Logger(label: "nightride.server")
    ) where C.Duration == Duration {
        self.init(configuration: configuration, clock: clock, hooks: Hooks(), logger: logger)
    }

    /// A server with a harness's `hooks` attached, whose time starts at `wallOrigin` on the wall
    /// clock (`nil`: now), on `store` when given (whose clock must agree with this server's).
    package init<C: Clock>(
        configuration: Configuration,
        clock: C,
        hooks: Hooks,
        logger: Logger,
        wallOrigin: Duration? = nil,
        store: (any ServerStore)? = nil
    ) where C.Duration == Duration {
        givenStore = store
        self.configuration = configuration
        self.logger = logger
        self.hooks = hooks
        loginLimits = SignInLimits(configuration.loginLimits)
        rules = RideRules(inactivityTimeout: configuration.inactivityTimeout, catalog: PlaceCatalog())
        let origin = clock.now
        readClock = { origin.duration(to: clock.now) }
        sleep = { try await clock.sleep(for: $0) }
        let wallOrigin = wallOrigin ?? Duration.milliseconds(Int64(Date().timeIntervalSince1970 * 1_000))
        self.wallOrigin = wallOrigin
        wallClock = WallClock(clock, startingAt: WallTime.date(wallOrigin))
    }

    /// A server on the continuous clock.
    public convenience init(configuration: Configuration = Configuration(), logger: Logger = Logger(label: "nightride.server")) {
        self.init(configuration: configuration, clock: ContinuousClock(), logger: logger)
    }

    /// The store, the sync server serving it, and the sessions kept in it.
    struct DataLife: Sendable {
        let store: any ServerStore
        let sync: SyncServer<NightrideAccess>
        let sessions: Sessions
    }

    // MARK: Running

    /// Opens the data (the first time), binds and starts serving in the background; returns the
    /// bound port once it accepts connections. Throws if the data cannot be opened, binding
    /// fails, or the server is already started.
    @discardableResult
    public func start() async throws -> Int {
        let port = try await host.start()
        logger.notice("nightride listening", metadata: ["host": "\(configuration.host)", "port": "\(port)", "epoch": "\(epoch ?? 0)"])
        return port
    }

    /// Stops and starts again on the same port, as a restarted process would: a server whose
    /// data is in a file opens it again and keeps every user, session and ride; one whose data
    /// is in memory loses them and starts a later epoch, so that its clients are signed out and
    /// re-bootstrap.
    ///
    /// - Parameter newEpoch: For a server on a file: start a new epoch in it first, as
    ///   `nightride server --new-epoch` does after a restore, so that clients drop the versions
    ///   they hold and take the server's values again, still signed in.
    /// - Parameter down: How long the server stays stopped before it starts again: an outage.
    /// - Returns: the port, the same as before.
    @discardableResult
    public func restart(newEpoch: Bool = false, down: Duration = .zero) async throws -> Int {
        guard port != nil else { throw StartFailure(description: "the server is not running") }
        await stop()
        if down > .zero { try await Task.sleep(for: down) }
        let fresh: DataLife
        if configuration.postgresURL != nil {
            // The database opened again, as a new process would.
            Self.close(data.withLock { $0.take() }?.store)
            fresh = try await makePostgresData()
        } else if let path = configuration.dataPath {
            // The file opened again, as a new process would: what survives is what it holds.
            data.withLock { $0 = nil }
            if newEpoch { _ = try SQLiteStore.startNewEpoch(at: path, now: wallDate) }
            fresh = try makeData(epoch: nil)
        } else {
            let previous = data.withLock { $0?.store.epoch } ?? 0
            fresh = try makeData(epoch: max(previous + 1, UInt64(Date().timeIntervalSince1970 * 1_000)))
        }
        hooks.opened(fresh.store, fresh.sync)
        configuration.inspector?.watch(fresh.sync)
        data.withLock { $0 = fresh }
        // The host binds the port it had, waiting for the old listening socket to be released.
        return try await start()
    }

    /// Closes every push socket and shuts down gracefully; returns once the server is down.
    /// Requests under way get up to ``Configuration/shutdownTimeout`` (5 s by default) to
    /// finish; every connection still open then is closed, as the end of the server's process
    /// would.
    public func stop() async {
        guard port != nil else { return }
        // A client that does not answer its socket's close within a second is cut off, as the
        // process's end would (the host's socket grace).
        await host.stop()
        logger.notice("nightride stopped")
    }

    /// The bound port while running.
    public var port: Int? {
        host.port
    }

    /// `http://host:port` while running.
    public var baseURL: URL? {
        port.flatMap { URL(string: "http://\(configuration.host):\($0)") }
    }

    /// The host, made at the first use.
    private var host: SyncHost {
        hosting.withLock { host in
            if let host { return host }
            let made = SyncHost(port: configuration.port, shutdownTimeout: configuration.shutdownTimeout, socketGrace: .seconds(1), logger: logger) {
                [weak self] port in
                guard let self else { throw StartFailure(description: "the server was released") }
                return try await self.launch(on: port)
            }
            host = made
            return made
        }
    }

    /// What a start runs: the data opened (the first time), its sync server's application on
    /// `port`, and the inactivity timer beside it.
    private func launch(on port: Int) async throws -> SyncHost.Launch {
        let life = try await openData()
        return SyncHost.Launch(
            life.sync, application: makeApplication(life.sync, port: port), services: inactivityTimer(on: life.sync).map { [$0] } ?? [])
    }

    // MARK: Data

    /// The data, opened at the first call (a start, or a server-side call before any): on a
    /// file, in memory or on PostgreSQL. Of two first calls at once, the data made first is kept
    /// (the other's database connections closed).
    func openData() async throws -> DataLife {
        if let life = data.withLock({ $0 }) { return life }
        let made = try await configuration.postgresURL != nil ? makePostgresData() : makeData(epoch: configuration.epoch)
        let (kept, lost) = data.withLock { life in
            if let life { return (life, true) }
            // Told before the data is shared: nothing is committed or pushed through it yet.
            hooks.opened(made.store, made.sync)
            configuration.inspector?.watch(made.sync)
            life = made
            return (made, false)
        }
        if lost { Self.close(made.store) }
        return kept
    }

    /// The store's clock: the wall clock as the server's clock moves it.
    private var storeClock: @Sendable () -> Date {
        let (origin, clock) = (wallOrigin, readClock)
        return { WallTime.date(origin + clock()) }
    }

    private func makeData(epoch: UInt64?) throws -> DataLife {
        if let givenStore { return assemble(givenStore) }
        let now = storeClock
        let store =
            try configuration.dataPath.map { try SQLiteStore(path: $0, durability: configuration.durability, now: now) }
            ?? SQLiteStore(epoch: epoch, now: now, blocking: configuration.runsOnCallingThread)
        return assemble(store)
    }

    /// Opens the PostgreSQL database, shared with the other instances on it.
    private func makePostgresData() async throws -> DataLife {
        #if PostgreSQL
            guard let url = configuration.postgresURL else { throw StartFailure(description: "no PostgreSQL URL") }
            var storeLogger = logger
            storeLogger[metadataKey: "part"] = "postgres"
            let store = try await PostgresStore(url: url, now: storeClock, logger: storeLogger)
            return assemble(store)
        #else
            throw StartFailure(description: Self.builtWithoutPostgreSQL)
        #endif
    }

    /// Closes `store`'s database connections, when it has any.
    private static func close(_ store: (any ServerStore)?) {
        #if PostgreSQL
            (store as? PostgresStore)?.close()
        #endif
    }

    /// What a server built without the package's `PostgreSQL` trait says when it is given a
    /// database: how to build one with it.
    public static let builtWithoutPostgreSQL =
        "this nightride was built without PostgreSQL support: build it with the PostgreSQL trait, as in "
        + "`swift run --package-path Nightride --traits PostgreSQL nightride server --postgres URL`"

    /// The sync server on `store`, its resources declared.
    private func assemble(_ store: any ServerStore) -> DataLife {
        let sessions = Sessions(
            store: store, lifetime: configuration.tokenLifetime, maximumPerUser: configuration.sessionsPerUser, clock: wallClock,
            // An account is one whatever the case of its name.
            userKey: AccountName.key(ofLogin:)
        )
        let access = NightrideAccess { [wallClock] token in
            if let user = try await sessions.user(forToken: token) { return user }
            return try await SessionsBeforeSlots.user(forToken: token, at: wallClock.now, in: store)
        }
        var syncLogger = logger
        syncLogger[metadataKey: "part"] = "sync"
        let sync = SyncServer(
            store: store, access: access,
            configuration: SyncServerConfiguration(
                forgetClientsAfter: configuration.clientRetention, forgetChangesAfter: configuration.changeRetention,
                // A token that expires closes its push sockets within 5 s (a session read each).
                sessionCheckInterval: .seconds(5)
            ),
            logger: syncLogger
        )
        declareResources(on: sync)
        return DataLife(store: store, sync: sync, sessions: sessions)
    }

    // MARK: Time

    /// The server's time: how long since it was created, on its clock.
    public var now: Duration {
        readClock()
    }

    /// The time on the wall clock, as the server's clock has moved it: what stored times use.
    var wallNow: Duration {
        WallTime.of(wallClock.now)
    }

    /// ``wallNow`` as a date: what times the store's change feed.
    var wallDate: Date {
        wallClock.now
    }

    // MARK: Sockets

    /// The epoch of the versions the server hands out now; `nil` before the first start.
    public var epoch: UInt64? {
        data.withLock { $0?.store.epoch }
    }

    /// How many push sockets are open now.
    public var openSockets: Int {
        data.withLock { $0?.sync.openSockets } ?? 0
    }

    /// Closes every push socket now (their clients reconnect, as after a network change).
    public func closePushSockets() {
        data.withLock { $0 }?.sync.closeAllSockets()
    }
}

/// Why ``NightrideServer/restart(newEpoch:down:)`` or the data's opening could not go on.
struct StartFailure: Error, CustomStringConvertible {
    let description: String
}
