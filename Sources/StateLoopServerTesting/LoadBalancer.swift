import StateLoopSyncTransports

/// Several instances of a server behind one address, as a load balancer puts them in front of
/// an app: each request and each push socket goes to one of the instances whose process runs,
/// the one `choose` picks (a simulation draws it from its seed; a test scripts it). With none
/// running, a request reaches nothing (``LostOnTheWay``) and a socket no server.
///
/// The instances share your store, as instances on one database do: a change committed through
/// one is pushed by every instance to its own sockets (the kit's commit observers), so that an
/// app whose socket is on one instance and whose mutation went through another still hears of
/// it.
///
/// ```swift
/// var instances: [ServerProcess] = []
/// for _ in 0..<3 { instances.append(try await ServerProcess { makeInstance(on: store) }) }
/// let balanced = LoadBalancer(instances) { count in simulation.random(in: 0..<count) }
/// ```
public struct LoadBalancer: SyncTransport {
    /// The instances, in a fixed order: `choose` picks among those running, in that order.
    public let instances: [ServerProcess]
    private let choose: @Sendable (_ count: Int) -> Int

    /// A balancer over `instances`, which sends each request and socket to the running
    /// instance at the index `choose(count)` returns among the `count` running ones.
    public init(_ instances: [ServerProcess], choose: @escaping @Sendable (_ count: Int) -> Int) {
        self.instances = instances
        self.choose = choose
    }

    public func send(_ request: TransportRequest, limit: Int) async throws -> TransportResponse {
        guard let instance = pick() else { throw LostOnTheWay(leg: .request) }
        return try await instance.send(request, limit: limit)
    }

    public func openPush(
        _ request: TransportRequest, deadline: Duration, maximumMessageBytes: Int, opened: @escaping @Sendable () async -> Void,
        message: @escaping @Sendable (Result<String, PushDecodingError>) async -> Void
    ) async -> PushAttempt {
        guard let instance = pick() else { return .unreachable }
        return await instance.openPush(request, deadline: deadline, maximumMessageBytes: maximumMessageBytes, opened: opened, message: message)
    }

    /// The running instance `choose` picks; `nil` when none runs.
    private func pick() -> ServerProcess? {
        let running = instances.filter(\.isRunning)
        guard !running.isEmpty else { return nil }
        return running[min(max(choose(running.count), 0), running.count - 1)]
    }
}
