import Foundation
import HTTPTypes
import Hummingbird
import Logging
import NIOCore
import StateLoopWire

/// Push sockets: `GET <path>/push` upgraded to a WebSocket per declared resource. A route of the
/// push router decides each upgrade; the upgraded socket lives in its channel's pipeline
/// (``PushUpgradeChannel``, ``PushSocketHandler``). Each socket registers with the hub before it
/// reads the current value, so no commit falls between the two.
extension SyncServer {
    /// Adds a route (`<path>/push`) for each declared resource to `router`, which decides its
    /// upgrades: refused when the caller has no session (401), may not read the key (404),
    /// holds the most sockets allowed (429) or its session cannot be checked now (503).
    func addPushRoutes(to router: Router<PushRequestContext>) {
        for case .read(let path, let resource, let key) in declared {
            router.get(RouterPath(path + "/push")) { request, context -> Response in
                let principal: Access.Principal?
                do {
                    principal = try await self.access.principal(for: request)
                } catch {
                    throw HTTPError(.serviceUnavailable, headers: [.retryAfter: "1"])
                }
                guard let principal else { throw HTTPError(.unauthorized) }
                guard let id = key(principal, context.parameters), self.access.mayRead(ResourceKey(resource: resource, id: id), as: principal) else {
                    throw HTTPError(.notFound)
                }
                guard self.hub.hasRoom(for: self.access.id(of: principal)) else {
                    throw HTTPError(.tooManyRequests, headers: [.retryAfter: "5"])
                }
                if let status = self.faultHooks?.refusal(of: ResourceKey(resource: resource, id: id)) {
                    throw HTTPError(status)
                }
                let socket = PushSocket(
                    key: ResourceKey(resource: resource, id: id), scope: self.access.id(of: principal),
                    client: Self.clientID(of: request)
                )
                context.handOver.keep(Granted(socket: socket, principal: principal))
                return Response(status: .ok)
            }
        }
        for case .query(let declaration) in declared {
            router.get(RouterPath(declaration.path + "/push")) { request, context -> Response in
                try await self.grantQuerySocket(request, context, declaration)
            }
        }
    }

    /// Decides the upgrade of a query's push socket: as a value's, and 404 when the query
    /// refuses the principal, 400 for a malformed cookie or parameters, 500 for a query that
    /// reads an undeclared field.
    private func grantQuerySocket(_ request: Request, _ context: PushRequestContext, _ declaration: QueryDeclaration) async throws -> Response {
        let principal: Access.Principal?
        do {
            principal = try await access.principal(for: request)
        } catch {
            throw HTTPError(.serviceUnavailable, headers: [.retryAfter: "1"])
        }
        guard let principal else { throw HTTPError(.unauthorized) }
        let cookie = try Self.cookie(of: request).mapError { HTTPError($0.status) }.get()
        let parameters = Self.queryParameters(of: request)
        do {
            guard try await store.read({ try declaration.resolve(for: principal, parameters, in: $0) }) != nil else { throw HTTPError(.notFound) }
        } catch let error as UndeclaredField {
            throw HTTPError(undeclared(error.field, declaration).status)
        } catch let error as ErrorResponse {
            throw HTTPError(error.status)
        } catch let error as HTTPError {
            throw error
        } catch {
            throw HTTPError(.serviceUnavailable, headers: [.retryAfter: "1"])
        }
        let scope = access.id(of: principal)
        guard hub.hasRoom(for: scope) else { throw HTTPError(.tooManyRequests, headers: [.retryAfter: "5"]) }
        // The hub counts and closes it as any socket; no value is ever written under its key.
        let key = ResourceKey(resource: "\u{0}query:\(declaration.path)", id: "")
        if let status = faultHooks?.refusal(of: key) { throw HTTPError(status) }
        let socket = PushSocket(key: key, scope: scope, client: Self.clientID(of: request))
        context.handOver.keep(
            Granted(socket: socket, principal: principal, query: QueryGrant(declaration: declaration, parameters: parameters, cookie: cookie)))
        return Response(status: .ok)
    }

    /// What a push route granted.
    private struct Granted: Sendable {
        let socket: PushSocket
        let principal: Access.Principal
        /// For a socket that follows a collection's query: which, with what.
        var query: QueryGrant? = nil
    }

    /// A query's socket: its declaration, the request's parameters and cookie.
    private struct QueryGrant: Sendable {
        let declaration: QueryDeclaration
        let parameters: QueryParameters
        let cookie: CollectionCookie?
    }

    /// Decides the upgrade of `head` with the push routes of `responder`.
    func decideUpgrade(
        of head: HTTPRequest, on channel: any Channel, logger: Logger, with responder: some HTTPResponder<PushRequestContext>
    ) async -> PushUpgradeChannel.Decision {
        let request = Request(head: head, body: RequestBody(buffer: ByteBuffer()))
        let context = PushRequestContext(source: ApplicationRequestContextSource(channel: channel, logger: logger))
        let status: HTTPResponse.Status
        var retryAfter: Int?
        do {
            let response = try await responder.respond(to: request, context: context)
            status = response.status
            retryAfter = response.headers[.retryAfter].flatMap { Int($0) }
        } catch let error as HTTPError {
            status = error.status
            retryAfter = error.headers[.retryAfter].flatMap { Int($0) }
        } catch {
            status = .internalServerError
        }
        guard status == .ok, let granted = context.handOver.take(as: Granted.self) else {
            return .refuse(status == .ok ? .notFound : status, body: ByteBuffer(data: Self.refusalBody(status)), retryAfter: retryAfter)
        }
        return .upgrade { [self] channel in try self.open(granted, request: request, on: channel) }
    }

    private static func refusalBody(_ status: HTTPResponse.Status) -> Data {
        switch status {
        case .unauthorized: WireMessage.unauthorized
        case .serviceUnavailable: WireMessage.unavailable
        case .tooManyRequests: WireMessage.error("tooManySockets", "this session holds the most push sockets allowed: close one")
        case .notFound: WireMessage.notFound
        default: WireMessage.error("upgradeRefused", "the push socket was refused (\(status.code))")
        }
    }

    /// Opens an upgraded socket, on its channel's event loop: registers it, puts its handler at
    /// the end of the pipeline, then checks its session again (a sign-out between the route's
    /// decision and the registration closed no socket of it) and reads its current value, in a
    /// task that ends once they are done.
    private func open(_ granted: Granted, request: Request, on channel: any Channel) throws {
        // A connection already gone (closed by a server stopping while its upgrade completed)
        // would never tell a handler added now that it ended: counted open, it would stay so.
        guard channel.isActive else { return }
        // Before anything is written: a socket whose client stops reading must turn unwritable
        // while the bytes it holds are few.
        try ConnectionTuning.boundPushBuffers(of: channel, to: pushWriting.bytesInFlight)
        let socket = granted.socket
        // Asked for before the socket counts as open: whatever happens to open sockets happens to it.
        let faults = faultHooks?.socket(following: socket.key)
        // A query's socket reads what its query and the collection's `readable` allow.
        let (access, principal, followsQuery) = (access, granted.principal, granted.query != nil)
        let mayRead: @Sendable () -> Bool = { followsQuery || access.mayRead(socket.key, as: principal) }
        let writer = PushSocketWriter(channel: channel, mayRead: mayRead, faults: faults, shared: pushWriting)
        let id: Int
        do {
            id = try hub.register(PushHub.Subscriber(socket: socket, writer: writer, lastMutationID: nil))
        } catch {
            try channel.pipeline.syncOperations.addHandler(PushSocketHandler(writer: writer, shared: pushWriting, key: socket.key) {})
            writer.close(error == .tooManySockets ? .tooManySockets : .serverStopping, discardingWaiting: true)
            return
        }
        let cut = faults.flatMap { faults in
            faults.mayCut
                ? Task {
                    await faults.cut()
                    if !Task.isCancelled { writer.close(.closedByServer, discardingWaiting: true) }
                } : nil
        }
        let checks = sessionChecks(of: socket, request: request, writer: writer, on: channel)
        do {
            try channel.pipeline.syncOperations.addHandler(
                PushSocketHandler(writer: writer, shared: pushWriting, key: socket.key) { [hub, queries, activity] in
                    cut?.cancel()
                    checks?.cancel()
                    hub.unregister(id, key: socket.key)
                    queries.unregister(id)
                    activity.report(.socketClosed(socket: id, key: socket.key, ending: writer.ending?.reason))
                })
        } catch {
            cut?.cancel()
            checks?.cancel()
            hub.unregister(id, key: socket.key)
            throw error
        }
        activity.report(.socketOpened(socket: id, key: socket.key, scope: socket.scope, client: socket.client))
        Task { [store, access, hub] in
            do {
                guard let principal = try await access.principal(for: request), access.id(of: principal) == socket.scope else {
                    writer.close(.signedOut, discardingWaiting: true)
                    return
                }
                if let query = granted.query {
                    try await self.subscribe(id: id, socket: socket, writer: writer, principal: principal, query)
                    writer.release()
                    return
                }
                let (value, lastMutationID) = try await store.read(socket.key, lastMutationIDOf: socket.client, scope: socket.scope)
                hub.adopt(lastMutationID: lastMutationID, for: id, key: socket.key)
                if let value { _ = writer.offer(PushOutbox.Entry(value: value, lastMutationID: lastMutationID)) }
                writer.release()
            } catch {
                // The sessions or the values cannot be read now: the client retries.
                writer.close(.storeUnavailable, discardingWaiting: true)
            }
        }
    }

    /// Registers a query's socket with its first answer (the whole result, or the difference
    /// since the request's cookie), in one store write holding commits back
    /// (``StoreTransaction/holdCommits()``): every later commit comes after it, and is published
    /// after the registration; an earlier one published after it is older than the first answer,
    /// and its outbox drops it.
    private func subscribe(id: Int, socket: PushSocket, writer: PushSocketWriter, principal: Access.Principal, _ grant: QueryGrant) async throws {
        let declaration = grant.declaration
        let readable: @Sendable ([String: FieldValue]) -> Bool = { declaration.readable(principal, $0) }
        let key = QueryHub.Key(
            collection: declaration.collection, query: declaration.query.name, parameters: grant.parameters.items, scope: socket.scope)
        let (queries, parameters) = (queries, grant.parameters)
        let opened = try await store.write { store -> (fields: [String], refused: Bool) in
            // The query's reads first, which may lock what commits lock before the feed's lock;
            // then made again once commits are held, since a commit may have changed it between
            // (on PostgreSQL, whose reads in a write see each statement's newest commits).
            guard try declaration.resolve(for: principal, parameters, in: store) != nil else { return ([], true) }
            try store.holdCommits()
            guard let query = try declaration.resolve(for: principal, parameters, in: store) else { return ([], true) }
            let lastMutationID = try socket.client.flatMap { try store.lastMutationID(of: $0, scope: socket.scope) }
            var first = try RowsPush.answer(
                of: declaration.collection, matching: query, since: grant.cookie, in: store, lastMutationID: lastMutationID, readable: readable)
            first.isUnlimited = true
            queries.register(
                id: id, socket: QueryHub.Socket(writer: writer, client: socket.client, lastMutationID: lastMutationID), key: key,
                subscription: QueryHub.Subscription(
                    collection: declaration.collection, query: query, readable: readable,
                    resolve: { try declaration.resolve(for: principal, parameters, in: $0) }, dependencies: declaration.query.dependencies),
                first: first)
            return (query.fields, false)
        }
        if opened.refused {
            writer.close(.accessRevoked, discardingWaiting: true)
        } else {
            prepareIndex(declaration.collection, opened.fields)
        }
    }

    /// Checks the socket's session again every ``SyncServerConfiguration/sessionCheckInterval``
    /// while it is open, one check at a time, as a timer on its event loop: a session that
    /// expired (or ended with no `closeSockets(of:)`) closes the socket as signed out. A check
    /// that cannot read the sessions leaves the socket alone until the next.
    private func sessionChecks(
        of socket: PushSocket, request: Request, writer: PushSocketWriter, on channel: any Channel
    ) -> RepeatedTask? {
        guard let interval = configuration.sessionCheckInterval else { return nil }
        let delay = TimeAmount(interval)
        let access = access
        let loop = channel.eventLoop
        return loop.scheduleRepeatedAsyncTask(initialDelay: delay, delay: delay) { [weak channel] task in
            guard let channel, channel.isActive else {
                task.cancel()
                return loop.makeSucceededVoidFuture()
            }
            let checked = loop.makePromise(of: Void.self)
            checked.completeWithTask {
                // A lookup that throws says nothing of the session: only a definite no closes.
                guard let principal = try? await access.principal(for: request) as Access.Principal?? else { return }
                if let principal, access.id(of: principal) == socket.scope { return }
                writer.close(.signedOut, discardingWaiting: true)
            }
            return checked.futureResult
        }
    }
}
