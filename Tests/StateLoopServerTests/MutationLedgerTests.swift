import Foundation
import StateLoopServerTesting
import StateLoopSyncTransports
import StateLoopWire
import Synchronization
import Testing

/// `MutationLedger`: a mutation is settled by the server's decision on it (applied or refused),
/// not by an answer that says to try again; a decision changed when the id came again is a
/// mutation applied twice.
@Suite struct MutationLedgerTests {
    private static func request(_ id: String) -> TransportRequest {
        TransportRequest(method: "POST", url: URL(string: "http://app.test/me/notes")!, headers: ["mutation-id": id], body: Data("{}".utf8))
    }

    @Test func onlyTheServersDecisionSettlesAMutation() async throws {
        let server = ScriptedServer([503, 401, 429, 200, 409])
        let ledger = MutationLedger(over: server)
        let (first, second) = (MutationID(rawValue: "a:1"), MutationID(rawValue: "a:2"))
        for _ in 0..<3 { _ = try await ledger.send(Self.request("a:1"), limit: 100) }
        #expect(ledger.unsettled([first, second]) == [first, second], "a 5xx, a 401 and a 429 say to try again: nothing was decided")
        _ = try await ledger.send(Self.request("a:1"), limit: 100)
        _ = try await ledger.send(Self.request("a:2"), limit: 100)
        #expect(ledger.unsettled([first, second]).isEmpty, "one applied, one refused")
        #expect(ledger.isSettled(first) && ledger.isSettled(second))
        #expect(ledger.appliedTwice().isEmpty)
    }

    @Test func aDifferentDecisionForTheSameIDIsAppliedTwice() async throws {
        let server = ScriptedServer([200, 200, 200], bodies: ["v1", "v1", "v2"])
        let ledger = MutationLedger(over: server)
        _ = try await ledger.send(Self.request("a:1"), limit: 100)
        _ = try await ledger.send(Self.request("a:1"), limit: 100)
        #expect(ledger.appliedTwice().isEmpty, "sent again and answered as the first time")
        _ = try await ledger.send(Self.request("a:1"), limit: 100)
        #expect(ledger.appliedTwice() == [MutationID(rawValue: "a:1")])
    }

    @Test func requestsWithoutAnIDAreNotMutations() async throws {
        let ledger = MutationLedger(over: ScriptedServer([200]))
        _ = try await ledger.send(TransportRequest(method: "GET", url: URL(string: "http://app.test/me/notes")!), limit: 100)
        #expect(ledger.appliedTwice().isEmpty && ledger.unsettled([MutationID(rawValue: "a:1")]).count == 1)
    }
}

/// Answers each request with the next status (and body) of its script.
private final class ScriptedServer: SyncTransport {
    private let script: Mutex<[(status: Int, body: String)]>

    init(_ statuses: [Int], bodies: [String]? = nil) {
        script = Mutex(statuses.enumerated().map { ($0.element, bodies?[$0.offset] ?? "") })
    }

    func send(_ request: TransportRequest, limit: Int) async throws -> TransportResponse {
        let next = script.withLock { $0.removeFirst() }
        return TransportResponse(status: next.status, headers: [:], body: Data(next.body.utf8))
    }

    func openPush(
        _ request: TransportRequest, deadline: Duration, maximumMessageBytes: Int, opened: @escaping @Sendable () async -> Void,
        message: @escaping @Sendable (Result<String, PushDecodingError>) async -> Void
    ) async -> PushAttempt {
        .unreachable
    }
}
