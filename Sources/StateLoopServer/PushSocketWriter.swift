import HummingbirdWebSocket
import Logging
import NIOCore
import NIOWebSocket
import Synchronization

/// Writes one push socket's outbox, in a task that runs only while there is something to
/// write: an offer to an idle socket starts one, and it ends when nothing more waits.
///
/// A socket with nothing to send therefore holds no task of its own. A task keeps the memory
/// its deepest await ever needed until it ends (Swift's task allocator), so a writer task per
/// socket, alive for the socket's life, cost about as much as the rest of the socket; now only
/// the connection's own task lives that long (it reads the client's frames, see
/// `SyncServer.serve`).
///
/// At most one writer task runs at a time (``PushOutbox`` says when one must start), so pushes
/// go out in the order they were offered. Threading: any thread; the hub offers from the
/// store's writer queue.
final class PushSocketWriter: Sendable {
    private let outbox = Mutex(PushOutbox())
    private let outbound: WebSocketOutboundWriter
    private let channel: any Channel
    private let mayRead: @Sendable () -> Bool
    private let faults: (any PushSocketFaults)?
    private let shared: PushWriting
    private let clientLeft = OnceFlag()

    init(
        outbound: WebSocketOutboundWriter, channel: any Channel, mayRead: @escaping @Sendable () -> Bool,
        faults: (any PushSocketFaults)?, shared: PushWriting
    ) {
        self.outbound = outbound
        self.channel = channel
        self.mayRead = mayRead
        self.faults = faults
        self.shared = shared
    }

    /// Queues `entry`, starting a writer if none is at work.
    func offer(_ entry: PushOutbox.Entry) -> PushOutbox.Offer {
        let (offer, startWriter) = outbox.withLock { $0.offer(entry) }
        if startWriter { startWriting() }
        return offer
    }

    /// Closes the socket from the server's side: what waits is pushed (unless
    /// `discardingWaiting`), then a close frame says why (the server stopping, or closing the
    /// socket: a sign-out, a cut).
    func close(discardingWaiting: Bool = false) {
        if outbox.withLock({ $0.close(discardingWaiting: discardingWaiting) }) { startWriting() }
    }

    /// The client closed its side, or its connection ended: nothing more is written.
    func clientHasLeft() {
        clientLeft.raise()
        outbox.withLock { $0.abandon() }
    }

    /// Whether a value waits for the writer.
    var hasWaiting: Bool {
        outbox.withLock { $0.hasWaiting }
    }

    private func startWriting() {
        Task { await self.write() }
    }

    /// Pushes what the outbox holds until it is told to pause or finish. Access is checked
    /// before each write, so a reader whose access was taken away gets nothing more; a write
    /// that does not finish within the slow-reader timeout is cut off by the server's
    /// ``SlowWriteWatch``.
    private func write() async {
        while true {
            switch outbox.withLock({ $0.next() }) {
            case .pause:
                return
            case .finish:
                guard !clientLeft.isRaised else { return }
                if shared.isAccepting() {
                    await end(.normalClosure, "closed by the server")
                } else {
                    await end(.goingAway, "the server is stopping")
                }
                return
            case .write(let entry):
                guard mayRead() else {
                    shared.metrics.pushesDropped.increment()
                    stopWriting()
                    await end(.policyViolation, "access revoked")
                    return
                }
                guard await push(entry) else {
                    stopWriting()
                    return
                }
            }
        }
    }

    /// Pushes one entry as its fault plan says; false when the socket is over (its connection
    /// failed, or its reader stalled and was cut off).
    private func push(_ entry: PushOutbox.Entry) async -> Bool {
        let fate = faults?.fate(of: entry.value.version) ?? .send
        if case .drop = fate {
            shared.metrics.pushesDropped.increment()
            return true
        }
        let message = entry.value.json.count <= shared.maximumPushBytes
            ? WireMessage.versioned(entry.value, lastMutationID: entry.lastMutationID) : WireMessage.hint
        var outcome = await send(message)
        if case .sendWithHint = fate, case .written = outcome {
            outcome = await send(WireMessage.hint)
        }
        switch outcome {
        case .written:
            shared.metrics.pushesSent.increment()
            return true
        case .failed:
            return false
        case .timedOut:
            shared.metrics.slowReadersClosed.increment()
            shared.logger.info("push socket closed: its reader does not read", metadata: ["key": "\(entry.value.key)"])
            return false
        }
    }

    /// One write under the slow-write watch. A write that cannot go out suspends (the channel is
    /// not writable) until the watch closes the connection, since no close frame could get
    /// through either.
    private func send(_ message: String) async -> WriteOutcome {
        let id = ObjectIdentifier(self)
        shared.slowWrites.begin(id, on: channel)
        let written = (try? await outbound.write(.text(message))) != nil
        let stalled = shared.slowWrites.end(id)
        return stalled ? .timedOut : written ? .written : .failed
    }

    /// The writer ends the socket itself: nothing more is offered or written.
    private func stopWriting() {
        outbox.withLock { $0.abandon() }
    }

    /// Sends a close frame. The client's answer ends the connection's read, and with it the
    /// socket; a client that does not answer within 5 s has its connection closed.
    private func end(_ code: WebSocketErrorCode, _ reason: String) async {
        try? await outbound.close(code, reason: reason)
        let channel = channel
        channel.eventLoop.scheduleTask(in: .seconds(5)) { channel.close(promise: nil) }
    }

    private enum WriteOutcome: Sendable {
        case written, failed, timedOut
    }
}

/// What every push socket's writer shares: the server's limit, slow-write watch, metrics and
/// log, and whether it still accepts sockets (a finished outbox of a stopping server closes
/// with "going away").
struct PushWriting: Sendable {
    let maximumPushBytes: Int
    let slowWrites: SlowWriteWatch
    let metrics: ServerMetrics
    let logger: Logger
    let isAccepting: @Sendable () -> Bool
}
