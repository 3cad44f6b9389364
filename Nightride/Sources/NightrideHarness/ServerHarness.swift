import Logging
import NightrideServer
import StateLoopServerTesting
import Synchronization

/// A Nightride server with what the demo, the chaos runs and the tests need around it, none of
/// which the server itself knows of: faults drawn from a seed, a network that can be cut,
/// counters of the traffic, and the truth (every value the server held, with its version and
/// time, read from the store's change feed) that clients are checked against.
///
/// ```swift
/// let harness = ServerHarness(faults: FaultPlan(seed: 7))
/// let port = try await harness.server.start()    // http://127.0.0.1:<port>
/// …
/// harness.faultsEnabled = false                  // stop the trouble, watch clients converge
/// let shown = try await harness.truth().changeLog.snapshot(of: "ann", at: harness.now)
/// await harness.server.stop()
/// ```
public final class ServerHarness: Sendable {
    /// The server, run as any other: start, stop and restart it, sign in, perform.
    public let server: NightrideServer
    let switches: Switches
    private let reader: TruthReader

    /// A server made with `configuration` whose time runs on `clock`, with `faults` (applied
    /// while ``faultsEnabled``): fault-plan latencies and socket cuts follow the clock too.
    /// With `sampleHistory`, a new account starts with 15 to 30 invented past rides (stored
    /// like real ones), so that a demo's history screen has pages.
    public init<C: Clock>(
        configuration: NightrideServer.Configuration = .init(),
        faults: FaultPlan? = nil,
        faultsEnabled: Bool = true,
        sampleHistory: Bool = false,
        clock: C,
        logger: Logger = Logger(label: "nightride.server")
    ) where C.Duration == Duration {
        let switches = Switches(faultPlan: faults, faultsEnabled: faultsEnabled, sleep: { try await clock.sleep(for: $0) })
        // The reader's origin is the server's, which the server picks as it is made: the reader
        // hears of a store only once the server starts, and reads only when asked.
        let stores = StoresOpened()
        let hooks = NightrideServer.Hooks(
            middleware: { router in router.add(middleware: FaultMiddleware(switches: switches)) },
            opened: { store, sync in
                // Socket ordinals, which fault decisions are keyed by, start again with each life.
                sync.pushFaults = FaultPlanPushes(switches: switches)
                stores.reader.withLock { $0 }?.opened(store)
            },
            pastRides: { user, places in sampleHistory ? SampleHistory.rides(for: user, places: places) : [] }
        )
        let server = NightrideServer(configuration: configuration, clock: clock, hooks: hooks, logger: logger)
        let reader = TruthReader(origin: server.wallOrigin)
        stores.reader.withLock { $0 = reader }
        self.server = server
        self.reader = reader
        self.switches = switches
    }

    /// A server on the continuous clock.
    public convenience init(
        configuration: NightrideServer.Configuration = .init(),
        faults: FaultPlan? = nil,
        faultsEnabled: Bool = true,
        sampleHistory: Bool = false,
        logger: Logger = Logger(label: "nightride.server")
    ) {
        self.init(
            configuration: configuration, faults: faults, faultsEnabled: faultsEnabled, sampleHistory: sampleHistory, clock: ContinuousClock(),
            logger: logger)
    }

    /// What the server held, from its first start on, through every restart: its change log,
    /// the catalog, and the audit of the mutations it processed. Read from the store's feed on
    /// each call (from where the last stopped); a server on a file that an earlier server
    /// wrote knows that one's history too, once started.
    public func truth() async throws -> ServerTruth {
        try await reader.truth()
    }

    /// The server's time: how long since it was made, on its clock. Change-log times use it.
    public var now: Duration {
        server.now
    }

    /// Counters of the traffic so far.
    public var stats: ServerStats {
        var stats = switches.withLock { $0.stats }
        stats.openSockets = server.openSockets
        return stats
    }

    /// Whether the fault plan applies now; switch it off to let clients converge.
    public var faultsEnabled: Bool {
        get { switches.withLock { $0.faultsEnabled } }
        set { switches.withLock { $0.faultsEnabled = newValue } }
    }

    /// Whether the network is cut: while set, every HTTP request and push upgrade is answered
    /// 503 and no socket stays open, as if the clients had lost their connection. Setting it
    /// closes every push socket at once.
    public var isNetworkCut: Bool {
        get { switches.withLock { $0.isNetworkCut } }
        set {
            switches.withLock { $0.isNetworkCut = newValue }
            if newValue { server.closePushSockets() }
        }
    }

    /// The fault plan (applied while ``faultsEnabled``); replaceable at runtime.
    public var faultPlan: FaultPlan? {
        get { switches.withLock { $0.faultPlan } }
        set { switches.withLock { $0.faultPlan = newValue } }
    }
}

/// Where the harness's store hook finds the reader, set once the server exists.
private final class StoresOpened: Sendable {
    /// Set in the harness's init, before the server can open a store.
    let reader = Mutex<TruthReader?>(nil)
}
