import Foundation
import StateLoopWire

/// One thing a ``SyncServer`` did, as those who watch it (StateLoopInspectorSyncServer) hear of
/// it: built only while someone watches, from what the kit knows at that moment.
package enum ServerActivity: Sendable {
    /// An HTTP request answered: the kit's routes and the app's own.
    case request(RequestReport)
    /// A mutation answered from inside its transaction.
    case mutation(MutationReport)
    /// A transaction committed: reported before any push of it leaves.
    case commit(CommittedChanges)
    /// What one commit's fan-out did with each socket that follows one of its values: one
    /// report per value some socket follows, in the commit's order (the first
    /// ``PushReport/listedValues``), and how many values were pushed in all.
    case pushes([PushReport], values: Int)
    /// A push socket registered.
    case socketOpened(socket: Int, key: ResourceKey, scope: String, client: ClientID?)
    /// A push socket's connection ended; `ending` is why the server closed it, `nil` when the
    /// client left.
    case socketClosed(socket: Int, key: ResourceKey, ending: String?)
    /// The sessions of the principal `scope` ended (every principal's for `nil`): its sockets
    /// are being closed.
    case sessionsEnded(scope: String?)

    /// An answered request, with what the routes learned of it.
    package struct RequestReport: Sendable {
        /// The method and the matched route's pattern (`POST /me/ride`), or `unmatched`.
        package var route: String
        package var status: Int
        package var duration: Duration
        /// The `Mutation-ID` header, as sent.
        package var mutation: String?
        /// The `Client-ID` header, as sent.
        package var client: String?
        /// What the routes found out while answering.
        package var found: RequestNote.Found
    }

    /// What a mutation route made of one mutation.
    package struct MutationReport: Sendable {
        package enum Outcome: String, Sendable {
            /// Its handler ran and its writes committed.
            case applied
            /// Refused, by its handler, its body or the access rules: remembered like an answer.
            case refused
            /// Sent again: answered with what the first time was answered, nothing run.
            case repeated
            /// The store failed (at its commit, say): nothing was committed or remembered, and
            /// the client's retry runs it anew. May follow an `applied` report of the same
            /// attempt, made before the commit failed.
            case failed
        }

        package var id: MutationID
        package var scope: String
        package var outcome: Outcome
        package var status: Int
        /// The version that answers it, when accepted.
        package var version: Version? = nil
        /// The refusal's error code and message, or the store's failure.
        package var refusal: String? = nil
        /// The request's method and path (`POST /rides/42`).
        package var path: String? = nil
        /// The request's body, when at most ``bodyLimit`` bytes.
        package var body: Data? = nil

        /// The largest body a report carries: the inspector keeps thousands of records.
        package static let bodyLimit = 16 << 10
    }

    /// One value's fan-out: the sockets it was queued to, those whose waiting value it replaced
    /// (their reader was slow), and those that dropped it (they held a newer one, or closed),
    /// each list its first ``namedSockets``, and how many it was queued to.
    package struct PushReport: Sendable {
        /// How many values of a commit are reported; the rest are counted.
        package static let listedValues = 20
        /// How many sockets of each outcome a report names; the rest are counted.
        package static let namedSockets = 20

        package var key: ResourceKey
        package var version: Version
        package var queued: [Int] = []
        package var coalesced: [Int] = []
        package var dropped: [Int] = []
        package var queuedCount = 0

        /// Notes what became of the value on `socket`.
        mutating func note(_ offer: PushOutbox.Offer, socket: Int) {
            switch offer {
            case .queued:
                queuedCount += 1
                if queued.count < Self.namedSockets { queued.append(socket) }
            case .coalesced:
                if coalesced.count < Self.namedSockets { coalesced.append(socket) }
            case .outdated, .closed:
                if dropped.count < Self.namedSockets { dropped.append(socket) }
            }
        }
    }
}
