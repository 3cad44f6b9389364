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
    }

    /// What a push route granted.
    private struct Granted: Sendable {
        let socket: PushSocket
        let principal: Access.Principal
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
        let writer = PushSocketWriter(
            channel: channel, mayRead: { [access, principal = granted.principal] in access.mayRead(socket.key, as: principal) },
            faults: faults, shared: pushWriting
        )
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
                PushSocketHandler(writer: writer, shared: pushWriting, key: socket.key) { [hub] in
                    cut?.cancel()
                    checks?.cancel()
                    hub.unregister(id, key: socket.key)
                })
        } catch {
            cut?.cancel()
            checks?.cancel()
            hub.unregister(id, key: socket.key)
            throw error
        }
        Task { [store, access, hub] in
            do {
                guard let principal = try await access.principal(for: request), access.id(of: principal) == socket.scope else {
                    writer.close(.signedOut, discardingWaiting: true)
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
