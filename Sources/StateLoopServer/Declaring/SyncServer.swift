import Foundation
import Hummingbird
import Logging
import Prometheus
import ServiceLifecycle
import StateLoopWire
import Synchronization

/// The backend half of StateLoop: versioned resources served over `GET` and push sockets,
/// idempotent mutations, and server-side changes, all on a durable ``ServerStore``.
///
/// The app declares its domain; the kit does the rest:
///
/// ```swift
/// let server = SyncServer(store: try SQLiteStore(path: path), access: Rules())
/// server.serve(todos, at: "me/todos") { user, _ in user }
/// server.mutation(at: "me/todos", body: NewTodo.self, changes: todos, key: { user, _ in user }) { transaction, user, todo in
///     var list = try transaction.read(todos, user) ?? []
///     list.append(todo.title)
///     try transaction.write(list, to: todos, user)
/// }
/// let host = SyncHost(port: 8080) { port in .init(server, application: server.application(port: port)) }
/// try await ServiceGroup(services: [host], gracefulShutdownSignals: [.sigterm], logger: logger).run()
/// ```
///
/// - `GET <path>` answers the value as StateLoopWire's `Versioned` JSON with the caller's
///   `lastMutationID` (its `Client-ID` header), read in one consistent view.
/// - `GET <path>/push` upgrades to a WebSocket that receives the value, then every later
///   version of it, in version order; a slow reader's outbox keeps only the newest value.
/// - `POST <path>` runs a mutation handler inside one store transaction together with the
///   versions it allocates and the record of its answer: a repeated `Mutation-ID` gets the
///   first answer without running again, and no answer is remembered for a change that was not
///   committed. Answers are forgotten once the client's later mutation arrives.
/// - ``update(_:)`` makes server-side changes (timers, one user's action changing another's
///   state) with the same guarantees, pushed to every affected socket.
///
/// Every route checks the ``AccessPolicy``. The wire format is StateLoopWire's article “The sync protocol”.
///
/// Threading: declarations (``serve(_:at:key:)``, ``mutation(at:body:changes:key:handler:)``)
/// are made before the routes are built; everything else may be called from any task.
public final class SyncServer<Access: AccessPolicy>: Sendable {
    /// Where the values live: written only through the kit, which keeps answers, progress and
    /// access checks consistent.
    let store: any ServerStore
    /// Who may do what.
    public let access: Access
    /// Limits and timings.
    public let configuration: SyncServerConfiguration
    let logger: Logger
    let hub: PushHub
    /// The push sockets that follow collections' queries.
    let queries: QueryHub
    let metrics: ServerMetrics
    /// What every push socket's writer shares.
    let pushWriting: PushWriting
    /// Every connection the server's applications accepted and have not closed yet.
    let connections = OpenConnections()
    /// Who watches what the server does (an inspector, through StateLoopInspectorSyncServer).
    package let activity = ServerActivityObservers()
    let declarations = Mutex<[Declaration]>([])
    /// The indexes of collections' queries asked of the store.
    let preparedIndexes = Mutex<Set<String>>([])
    private let faults = Mutex<(any PushFaultHooks)?>(nil)

    /// A server on `store`, checking `access` on every route and push. Metrics go to
    /// `registry` (a new one by default), which the `/metrics` route renders.
    public init(
        store: any ServerStore,
        access: Access,
        configuration: SyncServerConfiguration = SyncServerConfiguration(),
        metrics registry: PrometheusCollectorRegistry = PrometheusCollectorRegistry(),
        logger: Logger = Logger(label: "stateloop.server")
    ) {
        self.store = store
        self.access = access
        self.configuration = configuration
        self.logger = logger
        metrics = ServerMetrics(registry: registry)
        hub = PushHub(
            maximumSocketsPerPrincipal: configuration.maximumSocketsPerPrincipal, encodesOnce: configuration.encodesPushesOnce,
            drainsPerTask: configuration.pushDrainsPerTask, metrics: metrics, activity: activity
        )
        pushWriting = PushWriting(
            maximumPushBytes: configuration.maximumPushBytes, slowReaderTimeout: configuration.slowReaderTimeout,
            bytesInFlight: configuration.pushBytesInFlight, clientFramesPerSecond: configuration.maximumClientFramesPerSecond,
            metrics: metrics, logger: logger
        )
        queries = QueryHub(store: store, maximumPushBytes: configuration.maximumPushBytes, logger: logger)
        store.observeCommits { [hub, queries, activity] changes in
            activity.report(.commit(changes))
            hub.publish(changes)
            queries.publish(changes)
        }
    }

    /// Serves `resource` at `path` (`GET`, and `GET <path>/push` for its push socket). `key`
    /// says which value a principal means there (from the path's parameters, say, for
    /// `"rides/:id"`), or `nil` for none (404).
    public func serve<Value>(
        _ resource: ServerResource<Value>,
        at path: String,
        key: @escaping @Sendable (Access.Principal, Parameters) -> String?
    ) {
        declarations.withLock { $0.append(.read(path: path, resource: resource.name, key: key)) }
    }

    /// Accepts mutations at `POST <path>`: each request's JSON body is decoded as `Body` and
    /// handed to `handler` inside one store transaction. The answer is the version that `key`
    /// of `resource` has once the handler's writes are committed (StateLoopWire's
    /// `MutationReceipt`), or the ``MutationRefusal`` it threw. Each request needs a
    /// `Mutation-ID` header (1 to 64 bytes of letters, digits and `-_.:`).
    public func mutation<Body: Decodable & Sendable, Value>(
        at path: String,
        body: Body.Type,
        changes resource: ServerResource<Value>,
        key: @escaping @Sendable (Access.Principal, Parameters) -> String?,
        handler: @escaping @Sendable (ServerTransaction, Access.Principal, Body) throws -> Void
    ) {
        let run: MutationRunner = { parameters, principal, bodyBytes in
            guard let id = key(principal, parameters) else { throw MutationRefusal.notFound }
            let decoded = try Self.decode(Body.self, from: bodyBytes)
            return IncomingMutation.Prepared(key: resource.key(id)) { transaction in try handler(transaction, principal, decoded) }
        }
        declarations.withLock { $0.append(.mutation(path: path, run: run)) }
    }

    /// Makes a server-side change in one transaction and pushes it to every socket that
    /// follows a key it wrote. No access rule applies: the server itself acts.
    ///
    /// - Throws: what `body` throws (nothing is written then), or the store's error.
    @discardableResult
    public func update<Result: Sendable>(_ body: @escaping @Sendable (ServerTransaction) throws -> Result) async throws -> Result {
        let (result, closings) = try await timedWrite { store in
            let transaction = ServerTransaction(store: store, mayWrite: { _ in true })
            let result = try body(transaction)
            _ = try transaction.commitWrites()
            return (result, transaction.socketsToClose)
        }
        closeSockets(closings)
        return result
    }

    /// Reads in one consistent, read-only view of the store, beside writes rather than queued
    /// behind them (a page of a list, say, or a check that decides whether a change is due).
    ///
    /// - Throws: what `body` throws (``ServerTransaction/ReadOnlyTransaction`` for a write), or
    ///   the store's error.
    public func read<Result: Sendable>(_ body: @escaping @Sendable (ServerTransaction) throws -> Result) async throws -> Result {
        try await store.read { store in
            try body(ServerTransaction(store: store, mayWrite: { _ in false }, isReadOnly: true))
        }
    }

    /// Trouble inflicted on the pushes (see ``PushFaultHooks``; apps set it through
    /// StateLoopServerTesting); `nil`, the default, for none. Applies to sockets opened after
    /// it is set.
    package var faultHooks: (any PushFaultHooks)? {
        get { faults.withLock { $0 } }
        set { faults.withLock { $0 = newValue } }
    }

    /// Closes every push socket now; new ones are still accepted. Their clients reconnect and
    /// pull what they missed: call it when something every socket was authorized by changed
    /// (sessions revoked in bulk, say).
    public func closeAllSockets() {
        activity.report(.sessionsEnded(scope: nil))
        hub.closeOpenSockets()
    }

    /// Closes every push socket of the principal whose ``AccessPolicy/id(of:)`` is `principalID`:
    /// call it when its session ends (sign-out, revocation), since sockets are authorized when
    /// they open. Their clients reconnect, are refused, and pull to learn why.
    public func closeSockets(of principalID: String) {
        activity.report(.sessionsEnded(scope: principalID))
        hub.close(scope: principalID)
    }

    /// Closes the sockets of the sessions a committed transaction ended.
    func closeSockets(_ closings: SocketClosings) {
        if closings.all {
            closeAllSockets()
        } else {
            for principal in closings.principals { closeSockets(of: principal) }
        }
    }

    /// The epoch of every version the server hands out (its store's).
    public var epoch: UInt64 {
        store.epoch
    }

    /// The number of push sockets open now.
    public var openSockets: Int {
        hub.openSockets
    }

    /// The metrics in Prometheus's text format, as the `/metrics` route answers them.
    public var renderedMetrics: String {
        metrics.rendered()
    }

    /// A store write, timed into the commit-latency metric.
    func timedWrite<Result: Sendable>(_ body: @escaping @Sendable (any StoreTransaction) throws -> Result) async throws -> Result {
        let start = ContinuousClock.now
        defer { metrics.commitLatency.recordNanoseconds(Int64((ContinuousClock.now - start) / .nanoseconds(1))) }
        return try await store.write(body)
    }

    var declared: [Declaration] {
        declarations.withLock { $0 }
    }

    /// What a mutation route makes of one request once its principal is known: the key whose
    /// version answers it, and the handler bound to the decoded body.
    typealias MutationRunner = @Sendable (Parameters, Access.Principal, ByteBuffer) throws -> IncomingMutation.Prepared

    enum Declaration: Sendable {
        case read(path: String, resource: String, key: @Sendable (Access.Principal, Parameters) -> String?)
        case mutation(path: String, run: MutationRunner)
        case query(QueryDeclaration)
    }
}

extension SyncServer {
    /// Forgets, now and then every hour until cancelled, the clients silent for longer than
    /// `clientAge` and the change feed's entries older than `changeAge` (`nil`: kept).
    func forgetOldRecords(clientAge: Duration?, changeAge: Duration?) async {
        while !Task.isCancelled {
            if let clientAge {
                await forget("idle clients") { try await self.store.forgetClients(idleSince: Self.date(ago: clientAge)) }
            }
            if let changeAge {
                await forget("old changes") { try await self.store.forgetChanges(committedBefore: Self.date(ago: changeAge)) }
            }
            try? await Task.sleep(for: .seconds(3_600))
        }
    }

    private func forget(_ what: String, _ body: () async throws -> Int) async {
        do {
            let forgotten = try await body()
            if forgotten > 0 {
                logger.info("forgot \(what)", metadata: ["count": "\(forgotten)"])
            }
        } catch {
            logger.warning("could not forget \(what)", metadata: ["error": "\(error)"])
        }
    }

    private static func date(ago age: Duration) -> Date {
        Date(timeIntervalSinceNow: -(Double(age.components.seconds) + Double(age.components.attoseconds) / 1e18))
    }
}

extension SyncServer: Service {
    /// Forgets old records (see ``SyncServerConfiguration/forgetClientsAfter``) until the service
    /// group's graceful shutdown, then closes every push socket with "going away" once what its
    /// outbox held is sent, and returns when they are closed (or after the slow-reader timeout).
    /// A ``SyncHost`` runs it beside the application; in a group of your own, list the server
    /// after the application, so that it is shut down first and the sockets do not hold the HTTP
    /// server open.
    public func run() async throws {
        await withTaskGroup(of: Void.self) { group in
            let (clientAge, changeAge) = (configuration.forgetClientsAfter, configuration.forgetChangesAfter)
            if clientAge != nil || changeAge != nil {
                group.addTask { await self.forgetOldRecords(clientAge: clientAge, changeAge: changeAge) }
            }
            try? await gracefulShutdown()
            group.cancelAll()
        }
        await closeSocketsForShutdown()
    }
}

extension SyncServer {
    /// Stops accepting push sockets and closes every open one with "going away" once what its
    /// outbox held is sent; returns when none is open. A socket whose client has not answered
    /// within `grace` (the slow-reader timeout if `nil`) has its connection closed then, as the
    /// end of the process would: the application's graceful shutdown does not wait for push
    /// sockets, which live in their channels alone.
    ///
    /// The service's ``run()`` calls it, and a ``SyncHost`` before the application's graceful
    /// shutdown (with a grace of its own); ``acceptSocketsAgain()`` undoes it at the next start.
    /// Cancelled, it closes the connections of the sockets still open at once.
    func closeSocketsForShutdown(grace: Duration? = nil) async {
        let writers = hub.closeAll()
        let deadline = ContinuousClock.now + (grace ?? configuration.slowReaderTimeout)
        while hub.openSockets > 0, ContinuousClock.now < deadline {
            // A service group past its graceful shutdown's bound cancels: waiting on would spin.
            guard (try? await Task.sleep(for: .milliseconds(5))) != nil else { break }
        }
        for writer in writers where hub.openSockets > 0 {
            await writer.closeConnection()
        }
    }

    /// Accepts push sockets again after ``closeSocketsForShutdown(grace:)``.
    func acceptSocketsAgain() {
        hub.resumeAccepting()
    }

    /// Closes every connection that the server's applications accepted on `port` and that is
    /// still open, and returns once each is closed.
    func closeConnections(onPort port: Int) async {
        await connections.closeAll(onPort: port)
    }
}

/// What a ``SyncHost`` does with the sync server it runs beside its application.
extension SyncServer: HostedSyncServer {}
