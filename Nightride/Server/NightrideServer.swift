import Foundation
import Hummingbird
import HummingbirdWebSocket
import Logging
import NightrideModel
import ServiceLifecycle
import StateLoopWire
import Synchronization

/// The Nightride backend: the ``NightrideCore`` behind HTTP routes and WebSocket pushes, with
/// an inactivity timer and optional fault injection, runnable in-process.
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
/// Every change to the core, whether from a request, the timer or ``update(_:)``, is pushed to
/// the affected user's sockets in version order.
public final class NightrideServer: Sendable {
    /// The configuration the server was made with.
    public let configuration: Configuration
    let logger: Logger
    let state: Mutex<ServerState>
    private let lifecycle = Mutex<Lifecycle>(Lifecycle())
    /// Failed sign-ins per name and per address.
    let loginLimits: LoginLimits
    /// Closed by `stop()` once the graceful shutdown is over.
    let connections = OpenConnections()
    private let readClock: @Sendable () -> Duration
    let sleep: @Sendable (Duration) async throws -> Void

    /// A server whose time and timers run on `clock` (a test clock, say): change-log times, the
    /// inactivity timer, fault-plan latencies and socket cuts all follow it, so with a manual
    /// clock and faults on, held-back responses wait for the test to advance it.
    public init<C: Clock>(
        configuration: Configuration = Configuration(),
        clock: C,
        logger: Logger = Logger(label: "nightride.server")
    ) where C.Duration == Duration {
        self.configuration = configuration
        self.logger = logger
        loginLimits = LoginLimits(configuration.loginLimits)
        let origin = clock.now
        readClock = { origin.duration(to: clock.now) }
        sleep = { try await clock.sleep(for: $0) }
        // Milliseconds, so that a server restarted within the same second still starts a later
        // epoch: its clients must re-bootstrap, not drop its low counters as outdated.
        let epoch = configuration.epoch ?? UInt64(max(1, Date().timeIntervalSince1970 * 1_000))
        state = Mutex(ServerState(
            core: NightrideCore(epoch: epoch, inactivityTimeout: configuration.inactivityTimeout, tokenLifetime: configuration.tokenLifetime),
            faultPlan: configuration.faults,
            faultsEnabled: configuration.faultsEnabled
        ))
    }

    /// A server on the continuous clock.
    public convenience init(configuration: Configuration = Configuration(), logger: Logger = Logger(label: "nightride.server")) {
        self.init(configuration: configuration, clock: ContinuousClock(), logger: logger)
    }

    // MARK: Running

    /// Binds and starts serving in the background; returns the bound port once it accepts
    /// connections. Throws if binding fails or the server is already started.
    @discardableResult
    public func start() async throws -> Int {
        try await start(port: configuration.port)
    }

    /// Stops, forgets every user, token, ride and socket as a crashed in-memory server would,
    /// and starts again on the same port with a later epoch, so that clients must sign in
    /// again and re-bootstrap. The change log and the counters carry on, for audits.
    ///
    /// - Returns: the port, the same as before.
    @discardableResult
    public func restart() async throws -> Int {
        guard let port else { throw StartFailure(description: "the server is not running") }
        await stop()
        state.withLock { state in
            let epoch = max(state.core.epoch + 1, UInt64(Date().timeIntervalSince1970 * 1_000))
            state.core = state.core.restarted(epoch: epoch)
        }
        // The listening socket may take a moment to be released after the graceful shutdown.
        for attempt in 1...40 {
            do {
                return try await start(port: port)
            } catch where attempt < 40 && "\(error)".contains("Address already in use") {
                try await Task.sleep(for: .milliseconds(50))
            }
        }
        return try await start(port: port)
    }

    private func start(port: Int) async throws -> Int {
        let (ready, readyContinuation) = AsyncStream.makeStream(of: Int.self)
        var group = ServiceGroupConfiguration(
            services: [makeApplication(port: port) { port in readyContinuation.yield(port) }, InactivityTimer(server: self)],
            logger: logger
        )
        // A client that keeps a request open must not keep the server from stopping.
        group.maximumGracefulShutdownDuration = .seconds(5)
        let services = ServiceGroup(configuration: group)
        let claimed = lifecycle.withLock { lifecycle in
            guard lifecycle.services == nil else { return false }
            lifecycle.services = services
            return true
        }
        guard claimed else {
            throw StartFailure(description: "the server is already started")
        }
        state.withLock { $0.acceptsSockets = true }
        let task = Task {
            defer { readyContinuation.finish() }
            try await services.run()
        }
        lifecycle.withLock { $0.task = task }
        for await port in ready {
            lifecycle.withLock { $0.port = port }
            logger.info("nightride listening", metadata: ["host": "\(configuration.host)", "port": "\(port)"])
            return port
        }
        lifecycle.withLock { $0 = Lifecycle() }
        try await task.value
        throw StartFailure(description: "the server stopped before listening")
    }

    /// Closes every push socket and shuts down gracefully; returns once the server is down.
    /// Requests under way get up to 5 s to finish; every connection still open then is closed,
    /// as the end of the server's process would.
    public func stop() async {
        let running = lifecycle.withLock { lifecycle in
            defer { lifecycle = Lifecycle() }
            return lifecycle
        }
        guard let services = running.services else { return }
        state.withLock { state in
            state.acceptsSockets = false
            state.disconnectAll()
        }
        await services.triggerGracefulShutdown()
        _ = try? await running.task?.value
        connections.closeAll()
        logger.info("nightride stopped")
    }

    /// The bound port while running.
    public var port: Int? {
        lifecycle.withLock { $0.port }
    }

    /// `http://host:port` while running.
    public var baseURL: URL? {
        port.flatMap { URL(string: "http://\(configuration.host):\($0)") }
    }

    // MARK: State

    /// The server's time: how long since it was created, on its clock. Change-log times use it.
    public var now: Duration {
        readClock()
    }

    /// A copy of the domain core as it is now.
    public var core: NightrideCore {
        state.withLock { $0.core }
    }

    /// A copy of the change log as it is now.
    public var changeLog: ChangeLog {
        state.withLock { $0.core.changeLog }
    }

    /// Changes the core directly (a server-side event in a demo, say), with the server's time;
    /// the changes made are pushed like any other.
    public func update<Result: Sendable, Failure: Error>(
        _ body: (inout NightrideCore, _ now: Duration) throws(Failure) -> Result
    ) throws(Failure) -> Result {
        try state.withLock { (state: inout ServerState) throws(Failure) -> Result in
            let before = state.core.changeLog.records.count
            defer { state.publish(from: before, logger: logger) }
            return try body(&state.core, readClock())
        }
    }

    /// Counters of the traffic so far.
    public var stats: ServerStats {
        state.withLock { $0.stats }
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

    /// Forgets the sessions of `user` (of everyone when `nil`) and closes their push sockets,
    /// as a server that lost its tokens would: their clients are answered 401 until they sign
    /// in again.
    public func revokeSessions(of user: String? = nil) {
        state.withLock { state in
            state.core.revokeTokens(of: user)
            if let user {
                state.disconnect(user: user)
            } else {
                state.disconnectAll()
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

    // MARK: Inactivity

    /// Applies inactivity switch-offs as they fall due, so they are pushed without waiting for
    /// a request. Sleeps until the next deadline, but wakes at least every quarter timeout (at
    /// most a second), since a driver switching on meanwhile brings a deadline of their own.
    func runInactivityTimer() async throws {
        while !Task.isCancelled {
            let (untilNext, timeout) = update { core, now in
                core.expireInactiveDrivers(at: now)
                return (core.nextInactivityDeadline.map { $0 - now }, core.inactivityTimeout)
            }
            let maximumPause = timeout.map { min(.seconds(1), max(.milliseconds(10), $0 / 4)) } ?? .seconds(1)
            try await sleep(min(max(untilNext ?? maximumPause, .milliseconds(1)), maximumPause))
        }
    }

    private struct Lifecycle {
        var task: Task<Void, any Error>?
        var services: ServiceGroup?
        var port: Int?
    }
}

/// The inactivity timer as a service beside the HTTP server, ended by the same graceful shutdown.
private struct InactivityTimer: Service {
    let server: NightrideServer

    func run() async throws {
        do {
            try await cancelWhenGracefulShutdown { try await server.runInactivityTimer() }
        } catch is CancellationError {}
    }
}

/// Why ``NightrideServer/start()`` could not start, when binding itself did not throw.
struct StartFailure: Error, CustomStringConvertible {
    let description: String
}
