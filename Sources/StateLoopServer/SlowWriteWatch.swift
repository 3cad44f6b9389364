import NIOCore
import Synchronization

/// Watches every push socket's write in flight and closes the connection of one that has not
/// finished within the slow-reader timeout: its reader does not read, the socket's buffers are
/// full, and the write waits.
///
/// One watch for the whole server, rather than a timer raced against each write: a push then
/// costs two short locked updates instead of a task group with two child tasks and a sleep,
/// which was most of what a push to many sockets cost. The watch's task runs only while writes
/// are in flight, waking every half timeout, so a stalled write is cut after between one and one
/// and a half timeouts.
final class SlowWriteWatch: Sendable {
    private struct Write {
        let started: ContinuousClock.Instant
        let channel: any Channel
    }

    private struct State {
        var writes: [ObjectIdentifier: Write] = [:]
        var stalled: Set<ObjectIdentifier> = []
        var isWatching = false
    }

    private let state = Mutex(State())
    private let timeout: Duration

    init(timeout: Duration) {
        self.timeout = timeout
    }

    /// Notes that the socket `id` (its writer's identity) starts a write on `channel`.
    func begin(_ id: ObjectIdentifier, on channel: any Channel) {
        let startWatching = state.withLock { state in
            state.writes[id] = Write(started: .now, channel: channel)
            defer { state.isWatching = true }
            return !state.isWatching
        }
        if startWatching {
            Task { await self.watch() }
        }
    }

    /// Notes that socket `id`'s write is over; returns whether the watch had cut it off as
    /// stalled (the write then failed because its connection was closed).
    func end(_ id: ObjectIdentifier) -> Bool {
        state.withLock { state in
            state.writes[id] = nil
            return state.stalled.remove(id) != nil
        }
    }

    /// Closes the connections whose write is older than the timeout, every half timeout, until
    /// no write is in flight.
    private func watch() async {
        while true {
            try? await Task.sleep(for: timeout / 2)
            let now = ContinuousClock.now
            let (stalled, goOn): ([any Channel], Bool) = state.withLock { state in
                let late = state.writes.filter { now - $0.value.started >= timeout }
                for id in late.keys {
                    state.writes[id] = nil
                    state.stalled.insert(id)
                }
                if state.writes.isEmpty { state.isWatching = false }
                return (late.values.map(\.channel), state.isWatching)
            }
            for channel in stalled { channel.close(promise: nil) }
            if !goOn { return }
        }
    }
}
