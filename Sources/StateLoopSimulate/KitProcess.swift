import Foundation
import StateLoopServerTesting
import StateLoopSimulation
import StateLoopSyncTransports

/// The server kit's process as an app reaches it: its routes and push sockets while it is up;
/// nothing while it is down; an answer it was giving when it crashed is lost with it, and its
/// sockets end with it, as their connections would.
struct KitProcess: SyncTransport {
    let server: KitListServer
    let clock: SimulationClock

    func send(_ request: TransportRequest, limit: Int) async throws -> TransportResponse {
        guard let (generation, transport) = server.current else { throw LostRequest() }
        let answer = try await transport.send(request, limit: limit)
        guard server.current?.generation == generation else { throw LostRequest() }
        return answer
    }

    func openPush(
        _ request: TransportRequest, deadline: Duration, maximumMessageBytes: Int, opened: @escaping @Sendable () async -> Void,
        message: @escaping @Sendable (Result<String, PushDecodingError>) async -> Void
    ) async -> PushAttempt {
        guard let (generation, transport) = server.current else { return .unreachable }
        let (server, clock) = (server, clock)
        return await withTaskGroup(of: PushAttempt?.self) { group in
            group.addTask {
                await transport.openPush(request, deadline: deadline, maximumMessageBytes: maximumMessageBytes, opened: opened, message: message)
            }
            // The process crashed: its sockets end with it.
            group.addTask {
                while server.current?.generation == generation {
                    guard (try? await clock.sleep(for: .milliseconds(500))) != nil else { return nil }
                }
                return .ended(failed: true)
            }
            let first = await group.next() ?? nil
            group.cancelAll()
            return first ?? .ended(failed: false)
        }
    }
}
