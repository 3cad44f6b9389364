import Foundation
import Hummingbird
import Logging
import NightrideModel
import ServiceLifecycle
import StateLoopServer
import StateLoopServerTesting
import StateLoopServerPostgres
import StateLoopWire
import Synchronization

/// The Nightride backend on StateLoopServer: the ride rules (``RideOperation``) run in the
/// store's transactions, its two per-user values served over `GET` and push sockets with
/// idempotent mutations, sign-in, places and history as routes of its own, an inactivity timer,
/// and optional fault injection; runnable in-process.
///
/// ```swift
/// let server = NightrideServer(configuration: .init(faults: FaultPlan(seed: 7)))
/// let port = try await server.start()           // http://127.0.0.1:<port>
/// …
/// server.faultsEnabled = false                   // stop the trouble, watch clients converge
/// let truth = server.changeLog.snapshot(of: "ann", at: server.now)
/// await server.stop()
/// ```
///
/// Its data lives in a ``Configuration/dataPath`` file, which a restart keeps, or in memory,
/// which a restart loses (as a process with its data in memory would). Every change, whether
/// from a request, the timer or a server-side call, is committed with its versions and pushed
/// by the kit to the affected sockets in version order.
public final class NightrideServer: Sendable {
    /// The configuration the server was made with.
    public let configuration: Configuration
    let logger: Logger
    let state: Mutex<ServerState>
    /// What runs the application, the sync server and the inactivity timer: made at the first
    /// use, since what it launches needs the server.
    private let hosting = Mutex<SyncHost?>(nil)
    /// The store and the sync server on it, made at the first start.
    private let data = Mutex<DataLife?>(nil)
    /// Failed sign-ins per account and per address.
    let loginLimits: LoginLimits
    let rules: RideRules
    private let readClock: @Sendable () -> Duration
    let sleep: @Sendable (Duration) async throws -> Void
    /// The wall clock when the server's time began: stored times (drivers' idle times, session
    /// expiries) are on the wall clock, so that they mean the same after a restart.
    let wallOrigin: Duration
    /// The wall clock as the server's clock moves it, from ``wallOrigin``: what the kit's
    /// sessions and the inactivity timer read, so that they and the rules agree on the time.
    let wallClock: WallClock

    /// A server whose time and timers run on `clock` (a test clock, say): change-log times, the
    /// inactivity timer, session lifetimes, fault-plan latencies and socket cuts all follow it.
    public init<C: Clock>(
        configuration: Configuration = Configuration(),
        clock: C,
        logger: Logger = Logger(label: "nightride.server")
    ) where C.Duration == Duration {
        self.configuration = configuration
        self.logger = logger
        loginLimits = LoginLimits(configuration.loginLimits)
        rules = RideRules(inactivityTimeout: configuration.inactivityTimeout, catalog: PlaceCatalog())
        let origin = clock.now
        readClock = { origin.duration(to: clock.now) }
        sleep = { try await clock.sleep(for: $0) }
        let wallOrigin = Duration.milliseconds(Int64(Date().timeIntervalSince1970 * 1_000))
        self.wallOrigin = wallOrigin
        wallClock = WallClock(clock, startingAt: ServerHistory.date(wallTime: wallOrigin))
        state = Mutex(ServerState(faultPlan: configuration.faults, faultsEnabled: configuration.faultsEnabled))
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
        logger.info("nightride listening", metadata: ["host": "\(configuration.host)", "port": "\(port)", "epoch": "\(epoch ?? 0)"])
        return port
    }

    /// Stops and starts again on the same port, as a restarted process would: a server whose
    /// data is in a file opens it again and keeps every user, session and ride; one whose data
    /// is in memory loses them and starts a later epoch, so that its clients are signed out and
    /// re-bootstrap. The change log and the audit carry on either way.
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
            (data.withLock { $0.take() }?.store as? PostgresStore)?.close()
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
        state.withLock { $0.acceptsSockets = false }
        // A client that does not answer its socket's close within a second is cut off, as the
        // process's end would.
        await host.stop()
        logger.info("nightride stopped")
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
        let life = try await openDataForStart()
        state.withLock { $0.acceptsSockets = true }
        return SyncHost.Launch(life.sync, application: makeApplication(life.sync, port: port), services: inactivityTimer(on: life.sync).map { [$0] } ?? [])
    }

    // MARK: Data

    /// The data, opened at the first call; a server on PostgreSQL opens it as it starts
    /// (``openDataForStart()``), and until then has none.
    func openData() throws -> DataLife {
        if configuration.postgresURL != nil {
            guard let life = data.withLock({ $0 }) else { throw StartFailure(description: "a server on PostgreSQL opens its data as it starts") }
            return life
        }
        if let life = data.withLock({ $0 }) { return life }
        let made = try makeData(epoch: configuration.epoch)
        return data.withLock { life in
            if let life { return life }
            life = made
            return made
        }
    }

    /// The data for a start: opened at the first, on a file, in memory or on PostgreSQL.
    private func openDataForStart() async throws -> DataLife {
        guard configuration.postgresURL != nil else { return try openData() }
        if let life = data.withLock({ $0 }) { return life }
        let made = try await makePostgresData()
        return data.withLock { life in
            if let life { return life }
            life = made
            return made
        }
    }

    /// The store's clock: the wall clock as the server's clock moves it.
    private var storeClock: @Sendable () -> Date {
        let (origin, clock) = (wallOrigin, readClock)
        return { ServerHistory.date(wallTime: origin + clock()) }
    }

    private func makeData(epoch: UInt64?) throws -> DataLife {
        let now = storeClock
        let store = try configuration.dataPath.map { try SQLiteStore(path: $0, durability: configuration.durability, now: now) }
            ?? SQLiteStore(epoch: epoch, now: now)
        if configuration.keepsHistory { try catchUp(with: store) }
        return assemble(store)
    }

    /// Opens the PostgreSQL database, shared with the other instances on it, and reads its
    /// change feed into the change log.
    private func makePostgresData() async throws -> DataLife {
        guard let url = configuration.postgresURL else { throw StartFailure(description: "no PostgreSQL URL") }
        var storeLogger = logger
        storeLogger[metadataKey: "part"] = "postgres"
        let store = try await PostgresStore(url: url, now: storeClock, logger: storeLogger)
        guard configuration.keepsHistory else { return assemble(store) }
        // Other instances commit meanwhile: the commits heard while the log reads the feed are
        // held, then recorded after it (those it read already are skipped).
        var position = state.withLock { state in
            state.heldCommits = []
            return state.history.feedPosition
        }
        let life = assemble(store)
        defer {
            state.withLock { state in
                for held in state.heldCommits ?? [] { state.history.record(held.changes, at: held.time, epoch: held.epoch) }
                state.heldCommits = nil
            }
        }
        while true {
            let entries = try await store.changes(after: position, limit: 5_000)
            guard let last = entries.last else { break }
            position = last.sequence
            state.withLock { $0.history.record(entries, origin: wallOrigin) }
        }
        // The feed has values only: a refused mutation moved its client on without one.
        let progress = try await store.clientProgress()
        state.withLock { state in
            for client in progress { state.history.audit.noteProgress(client) }
        }
        return life
    }

    /// The sync server on `store`, its resources declared, the change log following its commits.
    private func assemble(_ store: any ServerStore) -> DataLife {
        // The change log hears of a commit before the sync server pushes it (observers run in
        // the order they were added): no client sees a version the server's truth lacks.
        // The epoch, not the store: an observer that held the store would keep it for ever.
        let epoch = store.epoch
        if configuration.keepsHistory {
            store.observeCommits { [weak self] changes in self?.record(changes, epoch: epoch) }
        }
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
        sync.pushFaults = FaultPlanPushes(
            plan: { [weak self] in self?.faultPlan },
            activeFaults: { [weak self] in self?.activeFaults },
            isNetworkCut: { [weak self] in self?.state.withLock { $0.isNetworkCut || !$0.acceptsSockets } ?? true },
            sleep: sleep,
            count: { [weak self] change in self?.state.withLock { change(&$0.stats) } }
        )
        return DataLife(store: store, sync: sync, sessions: sessions)
    }

    /// Reads into the change log and the audit what the store's feed holds beyond what they
    /// have: everything on a first open (a restarted process), the relabelling of a new epoch on
    /// a restart; a store in memory starts a feed of its own. Runs before anything can commit.
    private func catchUp(with store: SQLiteStore) throws {
        try state.withLock { state in
            if store.path == nil { state.history.feedPosition = 0 }
            try state.history.catchUp(from: store, origin: wallOrigin)
        }
    }

    /// Adds a commit to the change log and the audit, at its time on the server's clock.
    private func record(_ changes: CommittedChanges, epoch: UInt64) {
        let time = ServerHistory.wallTime(of: changes.time) - wallOrigin
        state.withLock { state in
            if state.heldCommits != nil {
                state.heldCommits?.append((changes, time, epoch))
            } else {
                state.history.record(changes, at: time, epoch: epoch)
            }
        }
    }

    // MARK: Time

    /// The server's time: how long since it was created, on its clock. Change-log times use it.
    public var now: Duration {
        readClock()
    }

    /// The time on the wall clock, as the server's clock has moved it: what stored times use.
    var wallNow: Duration {
        ServerHistory.wallTime(of: wallClock.now)
    }

    /// ``wallNow`` as a date: what times the store's change feed.
    var wallDate: Date {
        wallClock.now
    }

    // MARK: State

    /// What the server holds now, as its store's change feed has it (the store is opened if the
    /// server was not started yet, so a server on an earlier one's file knows its history).
    /// Empty unless the configuration ``Configuration/keepsHistory``.
    public var truth: ServerTruth {
        _ = try? openData()
        return state.withLock { ServerTruth(changeLog: $0.history.changeLog, catalog: rules.catalog, audit: $0.history.audit) }
    }

    /// A copy of the change log as it is now (the store opened first, as for ``truth``); empty
    /// unless the configuration ``Configuration/keepsHistory``.
    public var changeLog: ChangeLog {
        _ = try? openData()
        return state.withLock { $0.history.changeLog }
    }

    /// The epoch of the versions the server hands out now; `nil` before the first start.
    public var epoch: UInt64? {
        data.withLock { $0?.store.epoch }
    }

    /// Counters of the traffic so far.
    public var stats: ServerStats {
        let open = data.withLock { $0?.sync.openSockets } ?? 0
        var stats = state.withLock { $0.stats }
        stats.openSockets = open
        return stats
    }

    /// Whether the fault plan applies now; switch it off to let clients converge.
    public var faultsEnabled: Bool {
        get { state.withLock { $0.faultsEnabled } }
        set { state.withLock { $0.faultsEnabled = newValue } }
    }

    /// Whether the network is cut: while set, every HTTP request and push upgrade is answered
    /// 503 and no socket stays open, as if the clients had lost their connection. Setting it
    /// closes every push socket at once.
    public var isNetworkCut: Bool {
        get { state.withLock { $0.isNetworkCut } }
        set {
            state.withLock { $0.isNetworkCut = newValue }
            if newValue {
                closeAllSockets()
            }
        }
    }

    /// The fault plan (applied while ``faultsEnabled``); replaceable at runtime.
    public var faultPlan: FaultPlan? {
        get { state.withLock { $0.faultPlan } }
        set { state.withLock { $0.faultPlan = newValue } }
    }

    /// The fault plan if it applies now.
    var activeFaults: FaultPlan? {
        state.withLock { $0.activeFaults }
    }

    private func closeAllSockets() {
        data.withLock { $0 }?.sync.closeAllSockets()
    }
}

/// Why ``NightrideServer/restart(newEpoch:down:)`` or the data's opening could not go on.
struct StartFailure: Error, CustomStringConvertible {
    let description: String
}
