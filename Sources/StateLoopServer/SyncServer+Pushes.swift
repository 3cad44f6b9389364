import Foundation
import Hummingbird
import HummingbirdWebSocket
import NIOCore
import NIOWebSocket
import StateLoopWire

/// Push sockets: `GET <path>/push` upgraded to a WebSocket per declared resource. Each socket
/// registers with the hub before it reads the current value, so no commit falls between the
/// two; its one writer task drains its outbox; its reader notices the client's close.
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
                return .upgrade([:])
            } onUpgrade: { inbound, outbound, context in
                // The principal and key again: the upgrade's decision cannot hand them over.
                guard let principal = try? await self.access.principal(for: context.request),
                    let id = key(principal, context.requestContext.parameters)
                else { return }
                let socket = PushSocket(
                    key: ResourceKey(resource: resource, id: id), scope: self.access.id(of: principal),
                    client: Self.clientID(of: context.request)
                )
                await self.serve(
                    socket, principal: principal, inbound: inbound, outbound: outbound, channel: context.requestContext.channel
                )
            }
        }
    }

    /// Who a socket is for.
    struct PushSocket: Sendable {
        let key: ResourceKey
        let scope: String
        let client: ClientID?
    }

    private func serve(
        _ socket: PushSocket, principal: Access.Principal, inbound: WebSocketInboundStream, outbound: WebSocketOutboundWriter,
        channel: any Channel
    ) async {
        // Before the socket counts as open: whatever happens to open sockets happens to it.
        let faults = pushFaults?.socket(following: socket.key)
        let outbox = PushOutbox()
        let subscriber = PushHub.Subscriber(key: socket.key, scope: socket.scope, client: socket.client, outbox: outbox, lastMutationID: nil)
        let id: Int
        do {
            id = try hub.register(subscriber)
        } catch .tooManySockets {
            // Another socket of the principal won the last place.
            try? await outbound.close(.policyViolation, reason: "too many sockets")
            return
        } catch {
            try? await outbound.close(.goingAway, reason: "the server is stopping")
            return
        }
        defer { hub.unregister(id, key: socket.key) }
        do {
            let (value, lastMutationID) = try await store.read(socket.key, lastMutationIDOf: socket.client, scope: socket.scope)
            hub.adopt(lastMutationID: lastMutationID, for: id, key: socket.key)
            if let value { _ = outbox.offer(PushOutbox.Entry(value: value, lastMutationID: lastMutationID)) }
        } catch {
            try? await outbound.close(.unexpectedServerError, reason: "the server cannot reach its data")
            return
        }
        let clientLeft = OnceFlag()
        await withTaskGroup(of: Void.self) { group in
            group.addTask {
                // Reading answers pings and notices the client's close (or a frame too large,
                // which the WebSocket handler answers with 1009).
                do {
                    for try await _ in inbound {}
                } catch {}
                clientLeft.raise()
                outbox.close(discardingWaiting: true)
            }
            if let faults, faults.mayCut {
                group.addTask {
                    await faults.cut()
                    if !Task.isCancelled { outbox.close(discardingWaiting: true) }
                }
            }
            let mayRead: @Sendable () -> Bool = { [access] in access.mayRead(socket.key, as: principal) }
            var ending = await drain(outbox, to: outbound, of: id, on: channel, mayRead: mayRead, faults: faults)
            if case .left = ending, !clientLeft.isRaised {
                // The server closed the outbox (a sign-out, a cut): it says so with a close frame.
                ending = .close(.normalClosure, "closed by the server")
            }
            switch ending {
            case .left: break
            case .close(let code, let reason):
                try? await outbound.close(code, reason: reason)
                // The client's answer to the close frame ends the reader by itself, rather than a
                // cancellation of its read (which has been seen to leave the socket open for
                // good); a client that does not answer is cut off.
                group.addTask {
                    try? await Task.sleep(for: .seconds(5))
                    channel.close(promise: nil)
                }
                _ = await group.next()
            case .stalled:
                // The reader does not read: a close frame could not get through either.
                channel.close(promise: nil)
            }
            group.cancelAll()
        }
    }

    /// How a socket's writing ended.
    private enum Ending: Sendable {
        /// The reader left, or its connection failed.
        case left
        /// To be closed with a close frame: the server stops, or the reader lost its access.
        case close(WebSocketErrorCode, String)
        /// The reader stopped reading: its connection is closed without a word.
        case stalled
    }

    /// Writes what the outbox holds until it closes. Access is checked before each write, so
    /// a reader whose access was taken away gets nothing more; a write that does not finish
    /// within the slow-reader timeout is cut off by the server's ``SlowWriteWatch``.
    private func drain(
        _ outbox: PushOutbox, to outbound: WebSocketOutboundWriter, of socket: Int, on channel: any Channel,
        mayRead: @Sendable () -> Bool, faults: (any PushSocketFaults)?
    ) async -> Ending {
        let limit = configuration.maximumPushBytes
        while let entry = await outbox.next() {
            guard mayRead() else {
                metrics.pushesDropped.increment()
                return .close(.policyViolation, "access revoked")
            }
            let fate = faults?.fate(of: entry.value.version) ?? .send
            if case .drop = fate {
                metrics.pushesDropped.increment()
                continue
            }
            let message = entry.value.json.count <= limit
                ? WireMessage.versioned(entry.value, lastMutationID: entry.lastMutationID) : WireMessage.hint
            var outcome = await write(message, to: outbound, of: socket, on: channel)
            if case .sendWithHint = fate, case .written = outcome {
                outcome = await write(WireMessage.hint, to: outbound, of: socket, on: channel)
            }
            switch outcome {
            case .written: break
            case .failed: return .left
            case .timedOut:
                metrics.slowReadersClosed.increment()
                logger.info("push socket closed: its reader does not read", metadata: ["key": "\(entry.value.key)"])
                return .stalled
            }
            metrics.pushesSent.increment()
        }
        return hub.isAccepting ? .left : .close(.goingAway, "the server is stopping")
    }

    /// One write under the slow-write watch. A write that cannot go out suspends (the channel is
    /// not writable) until the watch closes the connection.
    private func write(_ message: String, to outbound: WebSocketOutboundWriter, of socket: Int, on channel: any Channel) async -> WriteOutcome {
        slowWrites.begin(socket, on: channel)
        let written = (try? await outbound.write(.text(message))) != nil
        let stalled = slowWrites.end(socket)
        return stalled ? .timedOut : written ? .written : .failed
    }

    private enum WriteOutcome: Sendable {
        case written, failed, timedOut
    }
}
