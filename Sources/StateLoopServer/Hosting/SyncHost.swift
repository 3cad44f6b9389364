import Foundation
import Hummingbird
import HummingbirdCore
import Logging
import NIOCore
import ServiceLifecycle
import Synchronization

#if canImport(Glibc)
    import Glibc
#elseif canImport(Musl)
    import Musl
#elseif canImport(Darwin)
    import Darwin
#endif

/// Runs a server app in this process: its Hummingbird application, the ``SyncServer`` behind it,
/// and services of its own (a timer, say), in one service group; stops them in order, and starts
/// them again on the same port.
///
/// ```swift
/// let host = SyncHost(port: 8080) { port in
///     let server = makeServer()                     // a new one each time, or the same one
///     return .init(server, application: server.application(port: port), services: [Recount(server)])
/// }
/// let port = try await host.start()                 // listening on `port`
/// await host.stop()
/// ```
///
/// - A start asks `launch` what to run, with the port to bind: the one given at the first start
///   (0: any free one), the one it bound at every later start, so that clients find the server
///   where it was. What `launch` rebuilds is the app's choice: a new ``SyncServer`` on a store
///   opened again, or the same one. The start returns once the application accepts connections.
/// - A stop closes the sync server's push sockets first, with "going away" (a client that does
///   not answer within `socketGrace` is cut off; one that reconnects meanwhile is refused), since
///   the application's graceful shutdown does not wait for them. Then the services are shut down
///   gracefully, the app's own first, then the sync server, then the application, whose requests
///   under way get `shutdownTimeout` to finish before they are cancelled. Connections of the
///   sync server's application still open then are closed, as the end of the process would
///   close them, and the stop returns.
/// - A service that ends or throws by itself ends the group's run (a graceful shutdown): the host
///   is stopped, says why in its log, and ``run()`` throws.
///
/// As a `Service` (``run()``), the host runs until the service group around it shuts down, so
/// that a process stops it on a signal:
/// `ServiceGroup(services: [host], gracefulShutdownSignals: [.sigterm], logger: logger)`.
///
/// `start()`, `stop()` and `restart()` run one at a time, in the order they were called: a stop
/// called while a start is under way stops what it started.
///
/// Threading: every member may be called from any isolation.
public final class SyncHost: Sendable {
    /// What one start runs: an application, and the services beside it.
    public struct Launch: Sendable {
        let application: any ApplicationProtocol
        let server: (any HostedSyncServer)?
        let services: [any Service]

        /// A sync server's application (``SyncServer/application(host:port:idleTimeout:requestHeadTimeout:requestBodyTimeout:maximumHeadBytes:maximumConnections:maximumConnectionsPerAddress:additionalChannelHandlers:middleware:routes:onServerRunning:)``),
        /// the server itself, and `services` of the app's own.
        public init<Access: AccessPolicy>(_ server: SyncServer<Access>, application: some ApplicationProtocol, services: [any Service] = []) {
            self.application = application
            self.server = server
            self.services = services
        }

        /// Any Hummingbird application, with `services` of the app's own, and no sync server:
        /// the stop has no push sockets to close first, nor connections of its own to close
        /// after.
        public init(_ application: some ApplicationProtocol, services: [any Service] = []) {
            self.application = application
            server = nil
            self.services = services
        }
    }

    /// The port to bind is taken by another socket: another server (this one, started
    /// earlier?) listens there. An app's command line adds its own hint (the flag that picks
    /// the port) to the description.
    public struct PortInUse: Error, Equatable, CustomStringConvertible {
        /// The port asked for.
        public let port: Int

        /// The failure to bind `port`.
        public init(port: Int) {
            self.port = port
        }

        /// What is wrong, and how to fix it.
        public var description: String {
            "port \(port) is in use: another process listens there (a server started earlier?). Stop it, or choose another port (0 picks a free one)"
        }
    }

    /// Why a start failed, when binding itself did not say, or why a running host ended.
    public struct Failure: Error, CustomStringConvertible {
        /// What went wrong.
        public let description: String
    }

    private let requestedPort: Int
    private let shutdownTimeout: Duration
    private let socketGrace: Duration
    private let logger: Logger
    private let launch: @Sendable (Int) async throws -> Launch
    private let state = Mutex(State())
    private let turns = Turns()

    /// A host that binds `port` at its first start (0, the default: any free port).
    ///
    /// - Parameters:
    ///   - port: The port to bind at the first start; 0 for any free port. Later starts bind
    ///     the port the first one got.
    ///   - shutdownTimeout: How long requests under way may take to finish once a stop began;
    ///     then they are cancelled, and their connections closed.
    ///   - socketGrace: How long a push socket's client has to answer the close before its
    ///     connection is cut.
    ///   - logger: Where the host logs its starts, stops and unexpected ends, and the logger of
    ///     its service group.
    ///   - launch: What to run, for the port given: called at every start.
    public init(
        port: Int = 0,
        shutdownTimeout: Duration = .seconds(5),
        socketGrace: Duration = .seconds(1),
        logger: Logger = Logger(label: "stateloop.host"),
        launch: @escaping @Sendable (_ port: Int) async throws -> Launch
    ) {
        requestedPort = port
        self.shutdownTimeout = shutdownTimeout
        self.socketGrace = socketGrace
        self.logger = logger
        self.launch = launch
    }

    /// The bound port while running.
    public var port: Int? {
        state.withLock { $0.running?.listening?.port }
    }

    /// `http://address:port` while running, the address being the one the application bound
    /// (IPv6 in brackets).
    public var baseURL: URL? {
        state.withLock { $0.running?.listening?.baseURL }
    }

    /// Starts the services and returns the bound port once the application accepts connections.
    ///
    /// - Throws: ``PortInUse`` when another socket holds the port; ``Failure`` when the host is
    ///   already started or the application stopped before listening; the error that binding
    ///   threw otherwise; what `launch` threw;
    ///   `CancellationError` when cancelled before listening (what started is stopped).
    @discardableResult
    public func start() async throws -> Int {
        try await startInTurn().port
    }

    /// Stops, in order (see ``SyncHost``), and returns once the server is down: nothing listens
    /// and no connection of the sync server is open. Does nothing on a host that is not running.
    public func stop() async {
        await turns.begin()
        defer { turns.end() }
        await stopRunning()
    }

    /// Stops if running, then starts again on the port it had (retrying for a moment while the
    /// old listening socket is released), asking `launch` what to run.
    ///
    /// - Returns: the bound port, the same as before.
    @discardableResult
    public func restart() async throws -> Int {
        await turns.begin()
        defer { turns.end() }
        await stopRunning()
        return try await startRunning().port
    }

    // MARK: Running

    private func startInTurn() async throws -> (port: Int, ended: EndSignal) {
        await turns.begin()
        defer { turns.end() }
        return try await startRunning()
    }

    private func startRunning() async throws -> (port: Int, ended: EndSignal) {
        let (port, again) = try state.withLock { state in
            guard state.running == nil else { throw Failure(description: "the host is already started") }
            return (state.boundPort ?? requestedPort, state.boundPort != nil)
        }
        // Once bound, the port is the host's: a moment after a stop, the old listening socket
        // may not be released yet. Not at a first start: a port taken by another stays taken.
        let attempts = again ? 40 : 1
        var attempt = 1
        while true {
            do {
                return try await run(try await launch(port))
            } catch let error as IOError where error.errnoCode == EADDRINUSE {
                guard attempt < attempts else { throw PortInUse(port: port) }
                attempt += 1
                try await Task.sleep(for: .milliseconds(50))
            } catch let error as IOError where error.errnoCode == EADDRNOTAVAIL {
                throw Failure(description: "cannot listen: the address asked for \(Self.notHere)")
            } catch SocketAddressError.unknown(let host, _) {
                throw Failure(description: "cannot listen on \(host): it \(Self.notHere)")
            }
        }
    }

    /// Why an address cannot be listened on, and which ones can.
    private static let notHere = "is not an address of this machine (127.0.0.1 listens for this machine alone, 0.0.0.0 on every network)"

    /// Runs `launch` in a service group; returns the bound port once it listens.
    private func run(_ launch: Launch) async throws -> (port: Int, ended: EndSignal) {
        let (listening, listeningContinuation) = AsyncStream.makeStream(of: SocketAddress?.self)
        var members: [any Service] = [
            Self.hosted(launch.application) { channel in listeningContinuation.yield(channel.localAddress) }
        ]
        if let server = launch.server { members.append(server) }
        members += launch.services
        // Whatever ends, the group is shut down gracefully: cancelling it while a connection is
        // being accepted traps in NIO (apple/swift-nio#3481).
        var configuration = ServiceGroupConfiguration(
            services: members.map {
                .init(service: $0, successTerminationBehavior: .gracefullyShutdownGroup, failureTerminationBehavior: .gracefullyShutdownGroup)
            },
            logger: logger
        )
        // Requests under way get this long once the shutdown began; then the group cancels them.
        configuration.maximumGracefulShutdownDuration = shutdownTimeout
        let group = ServiceGroup(configuration: configuration)
        let id = UUID()
        let ended = EndSignal()
        // Claimed before it runs: whichever comes first, the group's end or the listening
        // socket, finds the other's mark under the same lock.
        state.withLock { $0.running = Running(id: id, group: group, ended: ended, server: launch.server) }
        launch.server?.acceptSocketsAgain()
        let task = Task { [weak self] in
            var failure: (any Error)?
            do {
                try await group.run()
            } catch {
                failure = error
            }
            listeningContinuation.finish()
            await self?.endedByItself(id, failure: failure)
            ended.raise()
            if let failure { throw failure }
        }
        var address: SocketAddress??
        for await bound in listening {
            address = bound
            break
        }
        let listened = address.flatMap { address in
            address?.port.map { (port: $0, baseURL: Self.baseURL(of: address, port: $0)) }
        }
        let claimed = state.withLock { state in
            guard let listened, state.running?.id == id else { return false }
            state.running?.listening = listened
            state.boundPort = listened.port
            return true
        }
        guard claimed, let listened else {
            // Cancelled while binding, or the group ended: stop what may still run, then say why.
            state.withLock { state in
                if state.running?.id == id { state.running = nil }
            }
            await group.triggerGracefulShutdown()
            try await task.value
            try Task.checkCancellation()
            throw Failure(description: "the server stopped before listening")
        }
        logger.debug("listening", metadata: ["port": "\(listened.port)"])
        return (listened.port, ended)
    }

    private func stopRunning() async {
        guard
            let running = state.withLock({ state in
                defer { state.running = nil }
                return state.running
            }), let port = running.listening?.port
        else { return }
        // Push sockets first: the graceful shutdown does not wait for them, and a client that
        // reconnects as the application stops would otherwise find the sockets still taken.
        await running.server?.closeSocketsForShutdown(grace: socketGrace)
        await running.group.triggerGracefulShutdown()
        // The group cancels what still runs after `shutdownTimeout`; connections still open then
        // (a handler that ignores its cancellation, one accepted as the listener closed) are
        // closed, as the process's end would close them.
        _ = await running.ended.wait(within: shutdownTimeout)
        await running.server?.closeConnections(onPort: port)
        if !(await running.ended.wait(within: shutdownTimeout)) {
            logger.warning("a service did not end when cancelled: left running", metadata: ["port": "\(port)"])
        }
        logger.debug("stopped", metadata: ["port": "\(port)"])
    }

    /// The group of run `id` ended without a stop (a service ended or threw): the host is
    /// stopped, and says why.
    private func endedByItself(_ id: UUID, failure: (any Error)?) async {
        guard
            let running = state.withLock({ state -> Running? in
                guard let running = state.running, running.id == id else { return nil }
                state.running = nil
                return running
            }), let port = running.listening?.port
        else { return }
        let reason = failure.map { "\($0)" } ?? "a service ended"
        logger.error("the server stopped by itself", metadata: ["port": "\(port)", "reason": "\(reason)"])
        running.ended.fail(Failure(description: "the server stopped by itself: \(reason)"))
        await running.server?.closeConnections(onPort: port)
    }

    /// `application`, telling `listening` of its listening channel after its own hook ran.
    private static func hosted(
        _ application: some ApplicationProtocol, listening: @escaping @Sendable (any Channel) async -> Void
    ) -> any Service {
        HostedApplication(base: application, listening: listening)
    }

    private static func baseURL(of address: SocketAddress?, port: Int) -> URL? {
        let host = address?.ipAddress.map { $0.contains(":") ? "[\($0)]" : $0 } ?? "127.0.0.1"
        return URL(string: "http://\(host):\(port)")
    }

    private struct State {
        var running: Running?
        /// The port of the latest start, kept for every later one.
        var boundPort: Int?
    }

    private struct Running: Sendable {
        let id: UUID
        let group: ServiceGroup
        let ended: EndSignal
        let server: (any HostedSyncServer)?
        /// Set once the application accepts connections.
        var listening: (port: Int, baseURL: URL?)?
    }
}

extension SyncHost: Service {
    /// Starts, then runs until the service group around the host shuts down gracefully (a
    /// signal, say) or is cancelled, and stops.
    ///
    /// - Throws: what ``start()`` throws, or ``Failure`` when the host stopped by itself (one of
    ///   its services ended or threw), so that a process ends as its server did.
    public func run() async throws {
        let ended = try await startInTurn().ended
        await withTaskGroup(of: Void.self) { group in
            group.addTask { try? await gracefulShutdown() }
            group.addTask { await ended.wait() }
            _ = await group.next()
            group.cancelAll()
        }
        await stop()
        if let failure = ended.failure { throw failure }
    }
}

/// What a ``SyncHost`` does with the sync server beside its application: its push sockets
/// closed before the application stops and taken again at the next start, its connections
/// still open after the stop closed.
protocol HostedSyncServer: Service {
    func closeSocketsForShutdown(grace: Duration?) async
    func acceptSocketsAgain()
    func closeConnections(onPort port: Int) async
}

/// An application run as itself, but for one more hook once it listens: Hummingbird's
/// `Application` takes its `onServerRunning` only as it is made, and the host needs the bound
/// port of an application the app made.
private struct HostedApplication<Base: ApplicationProtocol>: ApplicationProtocol {
    typealias Responder = Base.Responder

    let base: Base
    let listening: @Sendable (any Channel) async -> Void

    var responder: Base.Responder {
        get async throws { try await base.responder }
    }

    var server: HTTPServerBuilder { base.server }
    var eventLoopGroup: any EventLoopGroup { base.eventLoopGroup }
    var configuration: ApplicationConfiguration { base.configuration }
    var logger: Logger { base.logger }
    var services: [any Service] { base.services }
    var processesRunBeforeServerStart: [@Sendable () async throws -> Void] { base.processesRunBeforeServerStart }

    func onServerRunning(_ channel: any Channel) async {
        await base.onServerRunning(channel)
        await listening(channel)
    }
}

/// The end of a host's service group: awaited until it comes or the waiting task is
/// cancelled, or with a bound; with the failure of a group that ended by itself.
///
/// Threading: any thread.
private final class EndSignal: Sendable {
    private struct State {
        var ended = false
        var failure: (any Error)?
        var waiters: [Int: CheckedContinuation<Void, Never>] = [:]
        var nextWaiter = 0
    }

    private let state = Mutex(State())

    /// Why the group ended by itself, if it did.
    var failure: (any Error)? {
        state.withLock { $0.failure }
    }

    /// Records why the group ended by itself, before it is raised.
    func fail(_ failure: any Error) {
        state.withLock { $0.failure = failure }
    }

    /// The group ended: every waiter goes on.
    func raise() {
        let waiters = state.withLock { state in
            state.ended = true
            defer { state.waiters = [:] }
            return Array(state.waiters.values)
        }
        for waiter in waiters { waiter.resume() }
    }

    /// Returns once the group ended, or once the waiting task is cancelled.
    func wait() async {
        let id = state.withLock { state in
            defer { state.nextWaiter += 1 }
            return state.nextWaiter
        }
        await withTaskCancellationHandler {
            await withCheckedContinuation { continuation in
                let now = state.withLock { state in
                    guard !state.ended, !Task.isCancelled else { return true }
                    state.waiters[id] = continuation
                    return false
                }
                if now { continuation.resume() }
            }
        } onCancel: {
            state.withLock { $0.waiters.removeValue(forKey: id) }?.resume()
        }
    }

    /// Whether the group ended within `limit`. Waits all the same when the caller is cancelled
    /// (a task of its own, which that cancellation does not reach): a stop's return says the
    /// server is down.
    func wait(within limit: Duration) async -> Bool {
        await Task {
            await withTaskGroup(of: Void.self) { group in
                group.addTask { await self.wait() }
                group.addTask { try? await Task.sleep(for: limit) }
                _ = await group.next()
                group.cancelAll()
            }
            return state.withLock { $0.ended }
        }.value
    }
}

/// One lifecycle operation at a time, in the order they came: a stop called while a start is
/// under way waits for it, then stops what it started.
///
/// Threading: any thread.
private final class Turns: Sendable {
    private let state = Mutex<(busy: Bool, waiting: [CheckedContinuation<Void, Never>])>((false, []))

    /// Waits for the operations before this one to end.
    func begin() async {
        await withCheckedContinuation { continuation in
            let now = state.withLock { state in
                guard state.busy else {
                    state.busy = true
                    return true
                }
                state.waiting.append(continuation)
                return false
            }
            if now { continuation.resume() }
        }
    }

    /// Lets the next operation begin.
    func end() {
        let next = state.withLock { state -> CheckedContinuation<Void, Never>? in
            guard !state.waiting.isEmpty else {
                state.busy = false
                return nil
            }
            return state.waiting.removeFirst()
        }
        next?.resume()
    }
}
