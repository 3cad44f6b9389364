import Foundation
import StateLoopServerTesting
import StateLoopSimulation
import StateLoopSyncTransports

/// The scenario's network between one device's app and the server kit, as the app's transport:
/// each request travels (latency, an outage) and may be lost on its way, the server answers it
/// through its routes, and the answer travels back and may be lost too (a mutation applied and
/// its answer lost is sent again). A push socket reaches the server while it is up; its messages
/// are lost now and then until the network is calm, and it ends when the server's process
/// crashes, as its connection would.
struct KitNetwork: SyncTransport {
    let server: KitListServer
    let device: Int
    let network: SimulatedNetwork

    func send(_ request: TransportRequest, limit: Int) async throws -> TransportResponse {
        let name = "device \(device): \(request.method) \(request.url.path)" + (request.headers["Mutation-ID"].map { " \($0)" } ?? "")
        network.simulation.record(name)
        try await network.travel()
        try network.lose(oneIn: request.method == "GET" ? 10 : 8)
        guard let (generation, transport) = server.current else { throw LostRequest() }
        let answer = try await transport.send(request, limit: limit)
        // The process that answered crashed meanwhile: the answer is lost with it.
        guard server.current?.generation == generation else { throw LostRequest() }
        try await network.travel()
        try network.lose(oneIn: 8)
        network.simulation.record("\(name) answered \(answer.status)")
        return answer
    }

    func openPush(
        _ request: TransportRequest, deadline: Duration, maximumMessageBytes: Int, opened: @escaping @Sendable () async -> Void,
        message: @escaping @Sendable (Result<String, PushDecodingError>) async -> Void
    ) async -> PushAttempt {
        guard (try? await network.travel()) != nil, let (generation, transport) = server.current else { return .unreachable }
        let (network, device, server) = (network, device, server)
        return await withTaskGroup(of: PushAttempt?.self) { group in
            group.addTask {
                await transport.openPush(
                    request, deadline: deadline, maximumMessageBytes: maximumMessageBytes, opened: opened,
                    message: { received in
                        guard (try? network.lose(oneIn: 20)) != nil else { return }
                        network.simulation.record("device \(device) is pushed \((try? received.get())?.count ?? 0) bytes")
                        await message(received)
                    })
            }
            // The server's process crashed: its sockets end with it.
            group.addTask {
                while server.current?.generation == generation {
                    guard (try? await network.clock.sleep(for: .milliseconds(500))) != nil else { return nil }
                }
                return .ended(failed: true)
            }
            let first = await group.next() ?? nil
            group.cancelAll()
            return first ?? .ended(failed: false)
        }
    }
}
