import HummingbirdCore
import Logging
import NIOCore

/// A server child channel that tunes each connection's socket (``ConnectionTuning``) and puts a
/// ``RequestHeadGuard`` in front of another one's pipeline.
struct HeadGuardedChannel<Base: ServerChildChannel>: ServerChildChannel {
    let base: Base
    let timeout: TimeAmount
    let maximumBytes: Int
    let stopping: OnceFlag
    let tuning: ConnectionTuning

    func setup(channel: any Channel, logger: Logger) -> EventLoopFuture<Base.Value> {
        channel.eventLoop.makeCompletedFuture {
            try tuning.apply(to: channel)
            try channel.pipeline.syncOperations.addHandler(
                RequestHeadGuard(timeout: timeout, maximumBytes: maximumBytes, stopping: stopping), position: .first
            )
        }.flatMap {
            base.setup(channel: channel, logger: logger)
        }
    }

    func handle(value: Base.Value, logger: Logger) async {
        await base.handle(value: value, logger: logger)
    }
}
