import Foundation
import StateLoopServerTesting
import StateLoopSyncTransports
import StateLoopTesting
import Synchronization
import Testing

/// `LossyTransport`: what it loses never reaches the other side, and what it lets through is
/// what the transport under it gave.
@Suite struct LossyTransportTests {
    private let request = TransportRequest(method: "POST", url: URL(string: "http://app.test/me/notes")!)

    @Test func aLostRequestNeverReachesTheServerAndALostAnswerDid() async throws {
        let server = CountingTransport()
        let lost = Mutex<LossyTransport.Leg?>(.request)
        let network = LossyTransport(over: server, clock: TestClock(), latency: { .zero }) { leg, _ in lost.withLock { $0 } == leg }
        await #expect(throws: LostOnTheWay(leg: .request)) { try await network.send(request, limit: 100) }
        #expect(server.requests == 0, "the request was lost before the server")
        lost.withLock { $0 = .answer }
        await #expect(throws: LostOnTheWay(leg: .answer)) { try await network.send(request, limit: 100) }
        #expect(server.requests == 1, "the server acted on the request whose answer was lost")
        lost.withLock { $0 = nil }
        #expect(try await network.send(request, limit: 100).status == 200)
        #expect(server.requests == 2)
    }

    @Test func aSocketLosesItsOpeningOrIsCutAtALostMessage() async {
        let server = CountingTransport()
        let lost = Mutex<Set<LossyTransport.Leg>>([.opening])
        let network = LossyTransport(over: server, clock: TestClock(), latency: { .zero }) { leg, _ in lost.withLock { $0.contains(leg) } }
        let received = Mutex<[String]>([])
        let push = {
            await network.openPush(self.request, deadline: .seconds(1), maximumMessageBytes: 100, opened: {}) { message in
                received.withLock { $0.append((try? message.get()) ?? "?") }
            }
        }
        #expect(await push() == .unreachable)
        #expect(server.sockets == 0, "a socket whose opening was lost reaches no server")
        lost.withLock { $0 = [.message] }
        #expect(await push() == .ended(failed: true), "a lost message cuts the socket: the connection failed")
        #expect(server.sockets == 1 && received.withLock { $0 }.isEmpty, "nothing after the cut")
        #expect(server.cancelled == 1, "the cut ended the server's socket")
        lost.withLock { $0 = [] }
        #expect(await push() == .ended(failed: false))
        #expect(received.withLock { $0 } == ["one", "two"])
        #expect(server.cancelled == 1)
    }
}

/// A server that answers every request 200 and opens every socket with two messages; a socket
/// whose task is cancelled after its first message ends there, counted.
private final class CountingTransport: SyncTransport {
    private let counts = Mutex((requests: 0, sockets: 0, cancelled: 0))
    var requests: Int { counts.withLock { $0.requests } }
    var sockets: Int { counts.withLock { $0.sockets } }
    var cancelled: Int { counts.withLock { $0.cancelled } }

    func send(_ request: TransportRequest, limit: Int) async throws -> TransportResponse {
        counts.withLock { $0.requests += 1 }
        return TransportResponse(status: 200)
    }

    func openPush(
        _ request: TransportRequest, deadline: Duration, maximumMessageBytes: Int, opened: @escaping @Sendable () async -> Void,
        message: @escaping @Sendable (Result<String, PushDecodingError>) async -> Void
    ) async -> PushAttempt {
        counts.withLock { $0.sockets += 1 }
        await opened()
        await message(.success("one"))
        if Task.isCancelled {
            counts.withLock { $0.cancelled += 1 }
            return .ended(failed: false)
        }
        await message(.success("two"))
        return .ended(failed: false)
    }
}
