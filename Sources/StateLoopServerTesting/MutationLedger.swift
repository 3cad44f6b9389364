import Foundation
import StateLoopSyncTransports
import StateLoopWire
import Synchronization

/// What a server answered to each mutation, as the answers leave it: put it between your
/// server's transport and the network that may lose them (a ``LossyTransport`` over a ledger
/// over a ``LoadBalancer``, say), and it records, by `Mutation-ID`, every answer the server gave,
/// including those the network then lost. With the ids your app's mutations were given
/// (`OptimisticResource.mutate(_:)` returns each), a simulation checks that nothing a user did
/// was lost (``unsettled(_:)``) and that nothing was applied twice (``appliedTwice()``).
///
/// ```swift
/// let ledger = MutationLedger(over: balanced)
/// let network = LossyTransport(simulating: simulation, over: ledger, clock: clock, name: "ann", calm: calm, outage: outage)
/// // … at the end:
/// for id in ledger.unsettled(idsTheAppMade) { problems.append("\(id) was never applied nor refused") }
/// ```
///
/// An answer settles a mutation when it is the server's decision on it: applied (2xx) or
/// refused (a 4xx other than 401, 407, 408 and 429, which say to try again, signed in or
/// later). Answers that are not decisions (a 5xx, a 401 while the session was ended) are not
/// kept.
public final class MutationLedger: SyncTransport {
    private let inner: any SyncTransport
    private let decisions = Mutex<[String: [Decision]]>([:])

    /// One decision the server sent for a mutation: its status and body.
    private struct Decision: Hashable {
        var status: Int
        var body: Data
    }

    /// A ledger of the mutations sent through it to `transport`.
    public init(over transport: any SyncTransport) {
        inner = transport
    }

    public func send(_ request: TransportRequest, limit: Int) async throws -> TransportResponse {
        let response = try await inner.send(request, limit: limit)
        if let id = Self.mutationID(of: request), Self.isDecision(response.status) {
            let decision = Decision(status: response.status, body: response.body)
            decisions.withLock { $0[id, default: []].append(decision) }
        }
        return response
    }

    public func openPush(
        _ request: TransportRequest, deadline: Duration, maximumMessageBytes: Int, opened: @escaping @Sendable () async -> Void,
        message: @escaping @Sendable (Result<String, PushDecodingError>) async -> Void
    ) async -> PushAttempt {
        await inner.openPush(request, deadline: deadline, maximumMessageBytes: maximumMessageBytes, opened: opened, message: message)
    }

    /// Whether the server applied or refused the mutation `id`.
    public func isSettled(_ id: MutationID) -> Bool {
        decisions.withLock { $0[id.rawValue] != nil }
    }

    /// Those of `ids` the server neither applied nor refused, in their order: each a user's
    /// action lost, unless its app still holds it to send.
    public func unsettled(_ ids: some Sequence<MutationID>) -> [MutationID] {
        decisions.withLock { decisions in ids.filter { decisions[$0.rawValue] == nil } }
    }

    /// The mutations the server decided on differently when their id came again: a mutation
    /// applied twice (a second version), or applied once and refused once. A store put back
    /// from a backup forgets what it decided since, so expect these after a restore.
    public func appliedTwice() -> [MutationID] {
        decisions.withLock { decisions in
            decisions.filter { Set($0.value).count > 1 }.keys.sorted().map(MutationID.init(rawValue:))
        }
    }

    private static func mutationID(of request: TransportRequest) -> String? {
        request.headers.first { $0.key.caseInsensitiveCompare("Mutation-ID") == .orderedSame }?.value
    }

    private static func isDecision(_ status: Int) -> Bool {
        (200...299).contains(status) || ((400...499).contains(status) && ![401, 407, 408, 429].contains(status))
    }
}
