import StateLoopInspector
import StateLoopServer

extension NightrideServer {
    /// How a server listens and behaves.
    public struct Configuration: Sendable {
        /// The SQLite file the server keeps its data in (users, sessions, rides, histories),
        /// which survives a restart and a crash; `nil` keeps it in memory, lost on restart.
        public var dataPath: String?
        /// The PostgreSQL database to keep the data in instead of a file
        /// (`postgres://user@host:port/database`), shared with any number of other instances
        /// on it: a change made through one reaches the clients of all. Takes precedence over
        /// ``dataPath``.
        public var postgresURL: String?
        /// What a commit to the data file survives: a power cut (an fsync per commit, the
        /// default) or any crash of the process, `kill -9` included (no fsync: faster).
        public var durability: SQLiteStore.Durability
        /// The address to bind; loopback by default.
        public var host: String
        /// The port to bind; 0 picks a free one (read it back from ``NightrideServer/start()``).
        public var port: Int
        /// Idle time after which a waiting driver's driver mode switches off; `nil` never.
        public var inactivityTimeout: Duration?
        /// Extra time `GET /places` takes, so that a search-as-you-type client sees its older
        /// queries still running when newer ones start.
        public var placesLatency: Duration
        /// Rides per history page.
        public var historyPageSize: Int
        /// The epoch of a new in-memory store's versions; `nil` takes the wall-clock millisecond
        /// at start-up, so that a restarted server's versions order after the previous one's. A
        /// data file keeps the epoch it was created with.
        public var epoch: UInt64?
        /// How long a login's token is accepted; afterwards every route and push socket answers
        /// 401 and the client must sign in again. `nil` never expires.
        public var tokenLifetime: Duration?

        /// bcrypt's work factor for new passwords (4 to 31; each step doubles the cost): 8, the
        /// default, is about 15 ms a hash here, slow enough to make guessing costly and fast
        /// enough for a sign-in. Hashing runs on NIO's thread pool, not on a request's task.
        /// Tests and the demo's scripted clients, which sign in by the hundred, use 4.
        public var passwordCost: UInt8

        /// How sign-ins and sign-ups are limited (429 with `Retry-After` past a limit): the
        /// kit's ``StateLoopServer/SignInLimits``.
        public var loginLimits: SignInLimits.Policy

        /// Whether the server's work runs on the calling thread: passwords hashed on the
        /// request's own task rather than on NIO's thread pool, and an in-memory store's
        /// transactions on the caller's thread rather than GRDB's queue. A simulation runs every
        /// step on one thread, and a job from another would come back at a moment its seed does
        /// not decide.
        package var runsOnCallingThread = false

        /// The most live sessions a user holds: a sign-in past it ends the oldest one (its
        /// token is refused from then on, its push sockets are closed), so that signing in
        /// again and again cannot grow what is stored. At most 99.
        public var sessionsPerUser: Int

        /// The most connections open at once, push sockets and HTTP keep-alive connections
        /// together; past it new connections wait in the listener's backlog until one closes.
        public var maximumConnections: Int

        /// How long requests under way may take to finish once a stop began, before they are
        /// cancelled and their connections closed (a push socket's client gets 1 s to answer
        /// the close first).
        public var shutdownTimeout: Duration

        /// The most connections one peer address may hold (`nil`, the default: half of
        /// ``maximumConnections``), so that one client cannot take them all; a benchmark that
        /// connects thousands of clients from one loopback address raises it.
        public var maximumConnectionsPerAddress: Int?

        /// How long the store's change feed keeps a commit, pruned hourly (the newest commit
        /// stays whatever its age); `nil` keeps every commit. Clients never need the feed to
        /// catch up (a client behind reads the current values again), so pruning costs them
        /// nothing. `nil` by default, for the demo and the tests, whose truth (NightrideHarness's)
        /// is read from the whole feed; `nightride server` keeps 7 days.
        public var changeRetention: Duration?

        /// How long a client silent for that long is remembered, with its last answers (pruned
        /// hourly); `nil` remembers every client. `nightride server` keeps 30 days.
        public var clientRetention: Duration?

        /// An inspector that records what the sync server does (its requests, mutations,
        /// commits, pushes, sockets and sessions), beside the clients' records; `nil`, the
        /// default, records nothing and costs nothing. `nightride server --inspect` sets one.
        public var inspector: Inspector?

        /// A configuration; the defaults listen on a free loopback port, keep the data in memory
        /// and accept tokens for 24 hours.
        public init(
            dataPath: String? = nil,
            postgresURL: String? = nil,
            durability: SQLiteStore.Durability = .powerLoss,
            host: String = "127.0.0.1",
            port: Int = 0,
            inactivityTimeout: Duration? = .seconds(300),
            placesLatency: Duration = .zero,
            historyPageSize: Int = 10,
            epoch: UInt64? = nil,
            tokenLifetime: Duration? = .seconds(24 * 3_600),
            loginLimits: SignInLimits.Policy = SignInLimits.Policy(),
            passwordCost: UInt8 = 8,
            maximumConnections: Int = 10_000,
            changeRetention: Duration? = nil,
            clientRetention: Duration? = nil,
            maximumConnectionsPerAddress: Int? = nil,
            sessionsPerUser: Int = 20,
            shutdownTimeout: Duration = .seconds(5)
        ) {
            self.shutdownTimeout = shutdownTimeout
            self.sessionsPerUser = min(max(1, sessionsPerUser), Sessions.maximumPerUserLimit)
            self.maximumConnectionsPerAddress = maximumConnectionsPerAddress
            self.changeRetention = changeRetention
            self.clientRetention = clientRetention
            self.passwordCost = passwordCost
            self.maximumConnections = maximumConnections
            self.dataPath = dataPath
            self.postgresURL = postgresURL
            self.durability = durability
            self.loginLimits = loginLimits
            self.host = host
            self.port = port
            self.inactivityTimeout = inactivityTimeout
            self.placesLatency = placesLatency
            self.historyPageSize = historyPageSize
            self.epoch = epoch
            self.tokenLifetime = tokenLifetime
        }
    }
}
