import Foundation
import Hummingbird
import HummingbirdWebSocket
import NIOCore
import NIOWebSocket
import StateLoopWire

/// Push sockets: `GET <path>/push` upgraded to a WebSocket per declared resource. Each socket
/// registers with the hub before it reads the current value, so no commit falls between the
/// two; the connection's task reads the client's frames for the socket's life, and a
/// ``PushSocketWriter`` writes only while something waits.
extension SyncServer {
    /// Adds a push route (`<path>/push`) for each declared resource to `router`.
    ///
    /// An upgrade is refused when the caller has no session, may not read the key, or holds
    /// the most sockets allowed. Hummingbird answers every refused upgrade with 400 whatever the
    /// reason, so the statuses thrown below are for the logs: a StateLoop client takes any
    /// refusal as a cue to pull, and the `GET` tells it why (401, 404, 503).
    public func addPushRoutes(to router: Router<PushRequestContext>) {
        for case .read(let path, let resource, let key) in declared {
            router.ws(RouterPath(path + "/push")) { request, context in
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
                if let status = self.pushFaults?.refusal(of: ResourceKey(resource: resource, id: id)) {
                    throw HTTPError(status)
                }
                context.handOver.keep(Granted(principal: principal, id: id))
                return .upgrade([:])
            } onUpgrade: { inbound, outbound, context in
                guard let granted = context.requestContext.handOver.take(as: Granted.self) else { return }
                let socket = PushSocket(
                    key: ResourceKey(resource: resource, id: granted.id), scope: self.access.id(of: granted.principal),
                    client: Self.clientID(of: context.request)
                )
                await self.serve(
                    socket, principal: granted.principal, request: context.request, inbound: inbound, outbound: outbound,
                    channel: context.requestContext.channel
                )
            }
        }
    }

    /// What a push upgrade was granted for.
    private struct Granted: Sendable {
        let principal: Access.Principal
        let id: String
    }

    /// Serves one socket on the connection's task: registers it, pushes the current value,
    /// then reads the client's frames (answering pings, noticing its close) until the
    /// connection ends.
    private func serve(
        _ socket: PushSocket, principal: Access.Principal, request: Request, inbound: WebSocketInboundStream,
        outbound: WebSocketOutboundWriter, channel: any Channel
    ) async {
        let faults = pushFaults?.socket(following: socket.key)
        let writer = PushSocketWriter(
            outbound: outbound, channel: channel, mayRead: { [access] in access.mayRead(socket.key, as: principal) },
            faults: faults, shared: pushWriting
        )
        let id: Int
        do {
            id = try hub.register(PushHub.Subscriber(socket: socket, writer: writer, lastMutationID: nil))
        } catch .tooManySockets {
            // Another socket of the principal won the last place.
            try? await outbound.close(.policyViolation, reason: "too many sockets")
            return
        } catch {
            try? await outbound.close(.goingAway, reason: "the server is stopping")
            return
        }
        defer { hub.unregister(id, key: socket.key) }
        guard await open(socket, id: id, request: request, writer: writer, outbound: outbound) else { return }
        let cut = faults.flatMap { faults in
            faults.mayCut ? Task { await faults.cut(); if !Task.isCancelled { writer.close(discardingWaiting: true) } } : nil
        }
        defer { cut?.cancel() }
        // Reading answers pings and notices the client's close (or a frame too large, which the
        // WebSocket handler answers with 1009), and the answer to the server's own close frame.
        do {
            for try await _ in inbound {}
        } catch {}
        writer.clientHasLeft()
    }

    /// The socket's opening, once it is registered: its session checked again (a sign-out
    /// between the upgrade's decision and the registration closed no socket of it) and its
    /// current value read and queued. Both run in a task that ends here: a task keeps the memory
    /// of its deepest await for as long as it lives, and the connection's task lives as long as
    /// the socket. False when the socket is to close.
    private func open(
        _ socket: PushSocket, id: Int, request: Request, writer: PushSocketWriter, outbound: WebSocketOutboundWriter
    ) async -> Bool {
        let opening = Task { [store, access] () async -> Result<(StoredValue?, UInt64?), OpeningFailure> in
            guard let principal = try? await access.principal(for: request), access.id(of: principal) == socket.scope else {
                return .failure(.signedOut)
            }
            do {
                return .success(try await store.read(socket.key, lastMutationIDOf: socket.client, scope: socket.scope))
            } catch {
                return .failure(.storeUnavailable)
            }
        }
        switch await opening.value {
        case .success(let (value, lastMutationID)):
            hub.adopt(lastMutationID: lastMutationID, for: id, key: socket.key)
            if let value { _ = writer.offer(PushOutbox.Entry(value: value, lastMutationID: lastMutationID)) }
            return true
        case .failure(.signedOut):
            try? await outbound.close(.policyViolation, reason: "no valid session")
            return false
        case .failure(.storeUnavailable):
            try? await outbound.close(.unexpectedServerError, reason: "the server cannot reach its data")
            return false
        }
    }

    /// Why a socket closes as it opens.
    private enum OpeningFailure: Error {
        case signedOut, storeUnavailable
    }
}
