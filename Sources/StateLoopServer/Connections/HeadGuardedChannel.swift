import HummingbirdCore
import Logging
import NIOCore
import Synchronization

/// A server child channel that tunes each connection's socket (``ConnectionTuning``), puts a
/// ``RequestHeadGuard`` in front of another one's pipeline, keeps each address to its share of
/// the connections, and registers each connection until it closes (``OpenConnections``).
struct HeadGuardedChannel<Base: ServerChildChannel>: ServerChildChannel {
    let base: Base
    let timeout: TimeAmount
    let bodyTimeout: TimeAmount
    let maximumBytes: Int
    let tuning: ConnectionTuning
    let shares: AddressShares
    let connections: OpenConnections

    func setup(channel: any Channel, logger: Logger) -> EventLoopFuture<Base.Value> {
        channel.eventLoop.makeCompletedFuture {
            connections.register(channel)
            try tuning.apply(to: channel)
            let overShare = !shares.admit(channel)
            try channel.pipeline.syncOperations.addHandler(
                RequestHeadGuard(timeout: timeout, bodyTimeout: bodyTimeout, maximumBytes: maximumBytes, overShare: overShare),
                position: .first
            )
        }.flatMap {
            base.setup(channel: channel, logger: logger)
        }
    }

    func handle(value: Base.Value, logger: Logger) async {
        await base.handle(value: value, logger: logger)
    }
}

/// How many connections each peer address holds, against a share of the server's connections:
/// one address (one attacker) cannot take every connection the server allows, and leave none
/// for everyone else.
final class AddressShares: Sendable {
    private let limit: Int
    private let counts = Mutex<[String: Int]>([:])

    init(limit: Int) {
        self.limit = limit
    }

    /// Counts `channel` under its peer's address until it closes; `false` when that address
    /// already holds its share (the connection is counted all the same, and refused).
    func admit(_ channel: any Channel) -> Bool {
        guard let address = channel.remoteAddress?.ipAddress else { return true }
        let count = counts.withLock { counts in
            counts[address, default: 0] += 1
            return counts[address]!
        }
        channel.closeFuture.whenComplete { [self] _ in
            counts.withLock { counts in
                let left = (counts[address] ?? 1) - 1
                counts[address] = left > 0 ? left : nil
            }
        }
        return count <= limit
    }
}
