import StateLoopSyncTransports
import Synchronization

/// A server's process as its apps reach it in a simulation or a test: one instance of your
/// server at a time, each made by the closure you give, that can crash and start again on the
/// data you keep. Your app's `SyncEndpoint` takes it as its transport (behind a
/// ``LossyTransport``, say); what a crash does to the app is what a real one does:
///
/// - a request sent while the process is down reaches nothing (``LostOnTheWay`` on the
///   request's way);
/// - a request the process was answering when it crashed loses its answer (``LostOnTheWay`` on
///   the answer's way): whatever the instance committed stays in your store, so the app's
///   mutation, sent again under its id, meets what the store remembers;
/// - a push socket cannot open while the process is down, and every socket open when it
///   crashes ends as failed, so that the app connects again to the next instance.
///
/// ```swift
/// let store = try SQLiteStore(epoch: 1, blocking: true)    // the data: it outlives a crash
/// let process = try await ServerProcess {
///     let server = SyncServer(store: store, access: Rules())   // a new instance: nothing kept in memory
///     server.serve(notes, at: "notes/:id") { user, parameters in parameters.get("id") }
///     let router = Router(context: SyncRequestContext.self)
///     server.addRoutes(to: router)
///     return InProcessTransport(router: router, server: server, clock: clock, runsInSimulation: true)
/// }
/// process.crash()
/// try await process.restart()
/// ```
public final class ServerProcess: SyncTransport {
    /// The instance running now, numbered, and the sockets open on it; `nil` while down.
    private struct Running {
        var instance: Int
        var transport: any SyncTransport
        var sockets: [Int: Task<PushAttempt, Never>] = [:]
    }

    private let start: @Sendable () async throws -> any SyncTransport
    private let running = Mutex<Running?>(nil)
    private let started = Mutex(0)
    private let socketNumbers = Mutex(0)

    /// A process running its first instance, made by `start` (called again at each restart).
    ///
    /// - Throws: What `start` threw: the process is then down.
    public init(start: @escaping @Sendable () async throws -> any SyncTransport) async throws {
        self.start = start
        try await restart()
    }

    /// Whether an instance runs.
    public var isRunning: Bool {
        running.withLock { $0 != nil }
    }

    /// How many instances have started, the first included.
    public var instances: Int {
        started.withLock { $0 }
    }

    /// The process dies: the answers it was giving are lost, its push sockets end, and every
    /// request fails until ``restart()``.
    public func crash() {
        let sockets = running.withLock { running in
            defer { running = nil }
            return running.map { Array($0.sockets.values) } ?? []
        }
        for socket in sockets { socket.cancel() }
    }

    /// A new instance starts, as a new process would: it keeps only what your `start` closure
    /// gives it (the store). A running one crashes first.
    ///
    /// - Throws: What `start` threw: the process stays down.
    public func restart() async throws {
        crash()
        let transport = try await start()
        let instance = started.withLock {
            $0 += 1
            return $0
        }
        running.withLock { $0 = Running(instance: instance, transport: transport) }
    }

    public func send(_ request: TransportRequest, limit: Int) async throws -> TransportResponse {
        guard let (instance, transport) = running.withLock({ $0.map { ($0.instance, $0.transport) } }) else {
            throw LostOnTheWay(leg: .request)
        }
        let answer = try await transport.send(request, limit: limit)
        // An answer from an instance that crashed meanwhile never leaves it.
        guard running.withLock({ $0?.instance }) == instance else { throw LostOnTheWay(leg: .answer) }
        return answer
    }

    public func openPush(
        _ request: TransportRequest, deadline: Duration, maximumMessageBytes: Int, opened: @escaping @Sendable () async -> Void,
        message: @escaping @Sendable (Result<String, PushDecodingError>) async -> Void
    ) async -> PushAttempt {
        let number = socketNumbers.withLock {
            $0 += 1
            return $0
        }
        // The socket runs in a task of its own, which a crash cancels (the inner transport
        // closes a socket whose task is cancelled); the caller's cancellation reaches it too.
        let socket: Task<PushAttempt, Never>? = running.withLock { running in
            guard let transport = running?.transport else { return nil }
            let socket = Task {
                await transport.openPush(request, deadline: deadline, maximumMessageBytes: maximumMessageBytes, opened: opened, message: message)
            }
            running?.sockets[number] = socket
            return socket
        }
        guard let socket else { return .unreachable }
        let attempt = await withTaskCancellationHandler {
            await socket.value
        } onCancel: {
            socket.cancel()
        }
        let crashed = running.withLock { running in
            running?.sockets.removeValue(forKey: number) == nil
        }
        return crashed ? .ended(failed: true) : attempt
    }
}
