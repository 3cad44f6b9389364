import Foundation
import StateLoopSyncTransports
import Synchronization

/// A network between an app and its server, around another transport: each way across takes a
/// latency, and a request, an answer, a socket's opening or one of its messages may be lost,
/// each as the caller decides (a simulation draws them from its seed; a test scripts them). A
/// lost request or answer fails with ``LostOnTheWay``, as a dropped connection would: the app's
/// resource retries, and its mutations are sent again under the same id. A socket whose opening
/// is lost reaches no server. A lost message cuts its socket, as on a real network, where a
/// stream loses no message from its middle and goes on: the app sees the connection fail, and
/// connects again.
///
/// ```swift
/// let network = LossyTransport(over: transport, clock: clock) {
///     .milliseconds(10 + simulation.random(in: 0..<300))
/// } loses: { leg, request in
///     simulation.random(in: 0..<10) == 0
/// }
/// ```
public struct LossyTransport: SyncTransport {
    /// Where something can be lost.
    public enum Leg: Sendable, Hashable {
        /// A request on its way to the server.
        case request
        /// The server's answer on its way back: the server has acted on the request.
        case answer
        /// A push socket's opening, which then reaches no server.
        case opening
        /// One message of an open push socket, which is cut there: the message and the rest are
        /// lost, and the attempt ends as failed.
        case message
    }

    private let inner: any SyncTransport
    private let sleep: @Sendable (Duration) async throws -> Void
    private let latency: @Sendable () -> Duration
    private let loses: @Sendable (Leg, TransportRequest) -> Bool

    /// A network around `transport` whose trips take `latency()` on `clock`, and which loses
    /// what `loses` says it does.
    public init<C: Clock<Duration>>(
        over transport: any SyncTransport, clock: C, latency: @escaping @Sendable () -> Duration,
        loses: @escaping @Sendable (Leg, TransportRequest) -> Bool
    ) {
        inner = transport
        sleep = { try await clock.sleep(for: $0) }
        self.latency = latency
        self.loses = loses
    }

    public func send(_ request: TransportRequest, limit: Int) async throws -> TransportResponse {
        try await sleep(latency())
        if loses(.request, request) { throw LostOnTheWay(leg: .request) }
        let answer = try await inner.send(request, limit: limit)
        try await sleep(latency())
        if loses(.answer, request) { throw LostOnTheWay(leg: .answer) }
        return answer
    }

    public func openPush(
        _ request: TransportRequest, deadline: Duration, maximumMessageBytes: Int, opened: @escaping @Sendable () async -> Void,
        message: @escaping @Sendable (Result<String, PushDecodingError>) async -> Void
    ) async -> PushAttempt {
        guard (try? await sleep(latency())) != nil, !loses(.opening, request) else { return .unreachable }
        let (inner, loses) = (inner, loses)
        let cut = CutMark()
        // The socket runs in a task of its own, which a cut cancels (the inner transport closes
        // a socket whose task is cancelled) without cancelling the caller; the caller's
        // cancellation reaches it too.
        let socket = Task {
            await inner.openPush(request, deadline: deadline, maximumMessageBytes: maximumMessageBytes, opened: opened) { received in
                guard !cut.isSet else { return }
                guard loses(.message, request) else { return await message(received) }
                cut.cut()
            }
        }
        cut.hold(socket)
        let attempt = await withTaskCancellationHandler {
            await socket.value
        } onCancel: {
            socket.cancel()
        }
        return cut.isSet ? .ended(failed: true) : attempt
    }
}

/// Whether a ``LossyTransport`` cut a socket, and the socket's task, which a cut cancels.
private final class CutMark: Sendable {
    private let state = Mutex<(isSet: Bool, socket: Task<PushAttempt, Never>?)>((false, nil))

    var isSet: Bool { state.withLock { $0.isSet } }

    /// Holds the socket's task; cancels it at once if it was cut before.
    func hold(_ socket: Task<PushAttempt, Never>) {
        let cut = state.withLock { state in
            state.socket = socket
            return state.isSet
        }
        if cut { socket.cancel() }
    }

    /// Cuts the socket: its task, once held, is cancelled.
    func cut() {
        let socket = state.withLock { state in
            state.isSet = true
            return state.socket
        }
        socket?.cancel()
    }
}

/// A request or an answer that a ``LossyTransport`` lost.
public struct LostOnTheWay: Error, Hashable, Sendable, CustomStringConvertible {
    /// Where it was lost.
    public var leg: LossyTransport.Leg

    /// An error for what was lost on `leg`.
    public init(leg: LossyTransport.Leg) {
        self.leg = leg
    }

    public var description: String {
        leg == .answer ? "the answer was lost on its way back" : "the request was lost on its way"
    }
}
