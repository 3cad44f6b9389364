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
        /// Faults to inject; `nil` for a well-behaved network.
        public var faults: FaultPlan?
        /// Whether the faults apply from the start (they can be switched at runtime).
        public var faultsEnabled: Bool
        /// Extra time `GET /places` takes, so that a search-as-you-type client sees its older
        /// queries still running when newer ones start.
        public var placesLatency: Duration
        /// Rides per history page.
        public var historyPageSize: Int
        /// Whether a new account starts with 15 to 30 invented past rides (stored like real
        /// ones), so that a demo's history has pages; off by default: an account's history is
        /// the rides it took.
        public var sampleHistory: Bool
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

        /// How many failed sign-ins a name, and an address, may have within a window before
        /// the next sign-in waits (429 with `Retry-After`).
        public var loginLimits: LoginLimits

        /// The most live sessions a user holds: a sign-in past it ends the oldest one (its
        /// token is refused from then on, its push sockets are closed), so that signing in
        /// again and again cannot grow what is stored. At most 99.
        public var sessionsPerUser: Int

        /// The most connections open at once, push sockets and HTTP keep-alive connections
        /// together; past it new connections wait in the listener's backlog until one closes.
        public var maximumConnections: Int

        /// Limits of failed sign-ins.
        public struct LoginLimits: Sendable {
            /// Failures per name within ``window``.
            public var failuresPerName: Int
            /// Failures per client address within ``window``.
            public var failuresPerAddress: Int
            /// The sliding window failures are counted in.
            public var window: Duration

            /// Limits; the defaults allow 5 failures per name and 50 per address a minute.
            public init(failuresPerName: Int = 5, failuresPerAddress: Int = 50, window: Duration = .seconds(60)) {
                self.failuresPerName = failuresPerName
                self.failuresPerAddress = failuresPerAddress
                self.window = window
            }
        }

        /// A configuration; the defaults listen on a free loopback port without faults, with
        /// tokens valid for 24 hours.
        public init(
            dataPath: String? = nil,
            postgresURL: String? = nil,
            durability: SQLiteStore.Durability = .powerLoss,
            host: String = "127.0.0.1",
            port: Int = 0,
            inactivityTimeout: Duration? = .seconds(300),
            faults: FaultPlan? = nil,
            faultsEnabled: Bool = true,
            placesLatency: Duration = .zero,
            historyPageSize: Int = 10,
            sampleHistory: Bool = false,
            epoch: UInt64? = nil,
            tokenLifetime: Duration? = .seconds(24 * 3_600),
            loginLimits: LoginLimits = LoginLimits(),
            passwordCost: UInt8 = 8,
            maximumConnections: Int = 10_000,
            sessionsPerUser: Int = 20
        ) {
            self.sessionsPerUser = min(max(1, sessionsPerUser), Sessions.maximumSlots)
            self.passwordCost = passwordCost
            self.maximumConnections = maximumConnections
            self.dataPath = dataPath
            self.postgresURL = postgresURL
            self.durability = durability
            self.loginLimits = loginLimits
            self.host = host
            self.port = port
            self.inactivityTimeout = inactivityTimeout
            self.faults = faults
            self.faultsEnabled = faultsEnabled
            self.placesLatency = placesLatency
            self.historyPageSize = historyPageSize
            self.sampleHistory = sampleHistory
            self.epoch = epoch
            self.tokenLifetime = tokenLifetime
        }
    }
}
