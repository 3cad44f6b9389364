import HummingbirdWebSocket
import NightrideModel

/// Push sockets: each one drains its own queue, filled in version order under the server's
/// lock, and ends when the client leaves, the server stops, or the fault plan cuts it.
extension NightrideServer {
    func servePushes(
        to key: ServerState.SocketKey, client: String?,
        inbound: WebSocketInboundStream, outbound: WebSocketOutboundWriter
    ) async {
        let (user, resource) = (key.user, key.resource)
        let (outbox, continuation) = AsyncStream.makeStream(of: String.self)
        let (id, connection) = state.withLock { $0.connect(key, client: client, outbox: continuation) }
        logger.debug("push socket open", metadata: ["user": "\(user)", "resource": "\(resource)", "connection": "\(connection)"])
        await withTaskGroup(of: Void.self) { group in
            // Reading is what answers pings and notices the client's close.
            group.addTask {
                do {
                    for try await _ in inbound {}
                } catch {}
                self.state.withLock { $0.disconnect(key, id: id) }
            }
            group.addTask {
                await self.cutWhenDue(key, id: id, connection: connection)
            }
            for await message in outbox {
                do {
                    try await outbound.write(.text(message))
                } catch {
                    break
                }
            }
            group.cancelAll()
        }
        state.withLock { $0.disconnect(key, id: id) }
        logger.debug("push socket closed", metadata: ["user": "\(user)", "resource": "\(resource)", "connection": "\(connection)"])
    }

    /// Cuts the socket once its fault-plan lease runs out, if faults are on by then. While
    /// faults are off it looks again every second, so switching them on takes effect.
    private func cutWhenDue(_ key: ServerState.SocketKey, id: Int, connection: Int) async {
        var round = 0
        while !Task.isCancelled {
            round += 1
            let lease = activeFaults?.disconnectDelay(user: key.user, resource: key.resource, connection: connection, round: round)
            do {
                try await sleep(lease ?? .seconds(1))
            } catch {
                return
            }
            guard lease != nil, activeFaults?.disconnectAfter != nil else { continue }
            logger.info("push socket cut by fault plan", metadata: ["user": "\(key.user)", "resource": "\(key.resource)"])
            state.withLock { state in
                state.stats.forcedDisconnects += 1
                state.disconnect(key, id: id)
            }
            return
        }
    }

    func closeAllSockets() {
        state.withLock { $0.disconnectAll() }
    }
}
