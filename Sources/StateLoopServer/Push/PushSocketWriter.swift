import Logging
import NIOCore
import NIOWebSocket
import Synchronization

/// Writes one push socket's outbox to its channel, on the channel's event loop, while the
/// channel can take it.
///
/// An offer to an idle socket schedules one drain on the event loop; the drain writes until
/// nothing waits, or until the channel stops being writable (its reader is slow: the newest
/// value waits in the outbox, and ``PushSocketHandler`` resumes the drain when the channel can
/// take more). No task is involved: a socket with nothing to send costs no memory but its own.
///
/// Threading: ``offer(_:)``, ``close(_:discardingWaiting:)`` and ``clientHasLeft()`` from any
/// thread (the hub offers from the store's writer queue); ``drain()`` and the close handshake
/// on the channel's event loop.
final class PushSocketWriter: Sendable {
    /// Why the server ends a socket, said in its close frame.
    enum Ending: Sendable, Equatable {
        /// A sign-out, a cut, or every socket closed at once: the client reconnects and learns why.
        case closedByServer
        /// The server shuts down.
        case serverStopping
        /// The reader may no longer read the key.
        case accessRevoked
        /// The session ended before the socket opened.
        case signedOut
        /// The store could not be read as the socket opened.
        case storeUnavailable
        /// The principal holds the most sockets allowed.
        case tooManySockets
        /// A collection's difference could not be pushed (lost, or too large): the reader
        /// catches up from its last cookie.
        case catchUp

        var code: WebSocketErrorCode {
            switch self {
            case .closedByServer, .catchUp: .normalClosure
            case .serverStopping: .goingAway
            case .accessRevoked, .signedOut, .tooManySockets: .policyViolation
            case .storeUnavailable: .unexpectedServerError
            }
        }

        var reason: String {
            switch self {
            case .closedByServer: "closed by the server"
            case .serverStopping: "the server is stopping"
            case .accessRevoked: "access revoked"
            case .signedOut: "no valid session"
            case .storeUnavailable: "the server cannot reach its data"
            case .tooManySockets: "too many sockets"
            case .catchUp: "catch up from the last cookie"
            }
        }
    }

    private struct State {
        var outbox = PushOutbox()
        /// Why the outbox was closed by the server, said once nothing more waits.
        var ending: Ending?
        /// Whether a close frame went out (the server's, or its answer to the client's): the
        /// client's close then ends the connection, and no other is sent.
        var sentClose = false
        /// Nothing is written until the socket's opening checked its session: a commit offered
        /// between the registration and that check waits (see ``release()``).
        var isHeld = true
        /// A drain was due while the writer was held.
        var drainWhenReleased = false
        /// Closes a connection whose client does not answer the server's close frame.
        var closeTimer: Scheduled<Void>?
    }

    private let state = Mutex(State())
    /// The socket's channel. Internal rather than private so that tests can read how many bytes
    /// it holds.
    let channel: any Channel
    /// Where a frame encoded once for many sockets (``EncodedPush/frame``) is written: the
    /// context of NIO's frame encoder, whose writes go on toward the socket without passing
    /// through the encoder again. `nil` when the pipeline has no encoder (frames then go through
    /// the channel as `WebSocketFrame`s).
    private let encodedFrames: NIOLoopBound<ChannelHandlerContext>?
    private let mayRead: @Sendable () -> Bool
    private let faults: (any PushSocketFaultHooks)?
    private let shared: PushWriting

    /// A writer for `channel`, whose pipeline (upgraded to WebSocket) holds NIO's frame encoder.
    /// On the channel's event loop.
    init(channel: any Channel, mayRead: @escaping @Sendable () -> Bool, faults: (any PushSocketFaultHooks)?, shared: PushWriting) {
        self.channel = channel
        encodedFrames = (try? channel.pipeline.syncOperations.context(handlerType: WebSocketFrameEncoder.self))
            .map { NIOLoopBound($0, eventLoop: channel.eventLoop) }
        self.mayRead = mayRead
        self.faults = faults
        self.shared = shared
    }

    /// Why the server closed the socket, if it did.
    var ending: Ending? {
        state.withLock { $0.ending }
    }

    /// The event loop this writer's drains run on.
    var eventLoop: any EventLoop { channel.eventLoop }

    /// Queues `entry`, scheduling a drain if none is under way (once released).
    func offer(_ entry: PushOutbox.Entry) -> PushOutbox.Offer {
        let (offer, drain) = queue(entry)
        if drain { scheduleDrain() }
        return offer
    }

    /// Queues `entry`; returns what became of it and whether the caller must now run ``drain()``
    /// on ``eventLoop`` (a fan-out schedules the drains of many writers in one task per loop).
    func queue(_ entry: PushOutbox.Entry) -> (PushOutbox.Offer, drainDue: Bool) {
        state.withLock { state in
            let (offer, startWriter) = state.outbox.offer(entry)
            return (offer, Self.drainDue(startWriter, in: &state))
        }
    }

    /// Lets the writer write, once the socket's opening passed its checks.
    func release() {
        let drain = state.withLock { state in
            state.isHeld = false
            defer { state.drainWhenReleased = false }
            return state.drainWhenReleased
        }
        if drain { scheduleDrain() }
    }

    /// Ends the socket from the server's side: what waits is pushed (unless
    /// `discardingWaiting`, or the socket's opening is not done: nothing goes to a socket before
    /// it passed its checks), then a close frame says why.
    func close(_ ending: Ending, discardingWaiting: Bool = false) {
        let drain = state.withLock { state in
            if state.ending == nil { state.ending = ending }
            let startWriter = state.outbox.close(discardingWaiting: discardingWaiting || state.isHeld)
            state.isHeld = false
            defer { state.drainWhenReleased = false }
            return startWriter || state.drainWhenReleased
        }
        if drain { scheduleDrain() }
    }

    /// Closes the connection now, without a close frame, and returns once its handler has seen
    /// it end (the socket has left the hub).
    func closeConnection() async {
        channel.close(promise: nil)
        try? await channel.closeFuture.get()
    }

    /// The connection ended: nothing more is written, and no timer is left for it.
    func clientHasLeft() {
        let timer = state.withLock { state in
            state.outbox.abandon()
            defer { state.closeTimer = nil }
            return state.closeTimer
        }
        timer?.cancel()
    }

    /// Notes a close frame the handler sent (its answer to the client's); returns whether one
    /// had gone out already, in which case the client's close ends the handshake.
    func noteCloseSent() -> Bool {
        state.withLock { state in
            defer { state.sentClose = true }
            return state.sentClose
        }
    }

    /// Whether a drain is to be scheduled now: one is due, and the writer is not held (else it
    /// is remembered for ``release()``).
    private static func drainDue(_ due: Bool, in state: inout State) -> Bool {
        guard due else { return false }
        guard state.isHeld else { return true }
        state.drainWhenReleased = true
        return false
    }

    private func scheduleDrain() {
        channel.eventLoop.execute { self.drain() }
    }

    /// Writes what the outbox holds while the channel is writable. Access is checked before
    /// each write, so a reader whose access was taken away gets nothing more. On the event loop.
    func drain() {
        var wrote = false
        defer { if wrote { channel.flush() } }
        while channel.isWritable {
            switch state.withLock({ $0.outbox.next() }) {
            case .pause:
                return
            case .finish:
                if let ending = state.withLock({ $0.ending }) { sendClose(ending) }
                return
            case .write(let entry):
                guard mayRead() else {
                    shared.metrics.pushesDropped.increment()
                    state.withLock { $0.outbox.abandon() }
                    sendClose(.accessRevoked)
                    return
                }
                if let rows = entry.rows {
                    wrote = true
                    guard pushDifference(entry, rows) else {
                        // A hint went out: the reader catches up from its last cookie on a new
                        // socket, since a later difference would follow one it lacks.
                        state.withLock { $0.outbox.abandon() }
                        sendClose(.catchUp)
                        return
                    }
                } else {
                    wrote = push(entry) || wrote
                }
            }
        }
    }

    /// Writes a collection's difference as its fault plan says; returns false when a hint went
    /// out in its place (lost, or over the push limit) or after it, which ends the socket.
    private func pushDifference(_ entry: PushOutbox.Entry, _ rows: RowsPush) -> Bool {
        let fate = faults?.fate(of: entry.value.version) ?? .send
        var sent = true
        if case .drop = fate {
            shared.metrics.pushesDropped.increment()
            sent = false
        } else if let encoded = entry.encoded {
            write(encoded)
        } else {
            let message = rows.message
            if message.count > shared.maximumPushBytes && !rows.isUnlimited {
                shared.metrics.pushesDropped.increment()
                sent = false
            } else {
                write(String(decoding: message, as: UTF8.self))
            }
        }
        if sent { shared.metrics.pushesSent.increment() }
        if !sent || fate == .sendWithHint {
            write(WireMessage.hint)
            return false
        }
        return true
    }

    /// Writes one entry as its fault plan says; returns whether anything was written.
    private func push(_ entry: PushOutbox.Entry) -> Bool {
        let fate = faults?.fate(of: entry.value.version) ?? .send
        if case .drop = fate {
            shared.metrics.pushesDropped.increment()
            return false
        }
        if entry.value.json.count > shared.maximumPushBytes {
            write(WireMessage.hint)
        } else if let encoded = entry.encoded {
            write(encoded)
        } else {
            write(WireMessage.versioned(entry.value, lastMutationID: entry.lastMutationID))
        }
        if case .sendWithHint = fate { write(WireMessage.hint) }
        shared.metrics.pushesSent.increment()
        return true
    }

    /// Writes a push encoded once for many sockets: its whole frame below the frame encoder
    /// when the pipeline has one, its text as a frame otherwise.
    private func write(_ encoded: EncodedPush) {
        if let encodedFrames {
            encodedFrames.value.write(NIOAny(encoded.frame), promise: nil)
        } else {
            channel.write(WebSocketFrame(fin: true, opcode: .text, data: encoded.payload), promise: nil)
        }
    }

    private func write(_ text: String) {
        let frame = WebSocketFrame(fin: true, opcode: .text, data: channel.allocator.buffer(string: text))
        channel.write(frame, promise: nil)
    }

    /// Sends the server's close frame; a client that does not answer it within 5 s has its
    /// connection closed. On the event loop.
    private func sendClose(_ ending: Ending) {
        guard !noteCloseSent() else { return }
        var data = channel.allocator.buffer(capacity: 2 + ending.reason.utf8.count)
        data.write(webSocketErrorCode: ending.code)
        data.writeString(ending.reason)
        channel.writeAndFlush(WebSocketFrame(fin: true, opcode: .connectionClose, data: data), promise: nil)
        let channel = channel
        let timer = channel.eventLoop.scheduleTask(in: .seconds(5)) { channel.close(promise: nil) }
        state.withLock { $0.closeTimer = timer }
    }
}

/// What every push socket's writer and handler share: the server's limits, timeout, metrics and
/// log.
struct PushWriting: Sendable {
    let maximumPushBytes: Int
    let slowReaderTimeout: Duration
    /// About the most bytes a socket holds unread (``SyncServerConfiguration/pushBytesInFlight``).
    let bytesInFlight: Int
    /// The client frames a socket takes per second on average, twice as many at once.
    let clientFramesPerSecond: Int
    let metrics: ServerMetrics
    let logger: Logger
}
