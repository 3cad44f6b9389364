import Foundation
import StateLoopWire

/// What one committed transaction changed, as the store's change feed hands it on: the values
/// written (the newest of each key) and the clients whose processed mutations moved on.
///
/// A store delivers these in commit order, so the pushes built from them leave each key's
/// versions in order and never name a mutation the value does not contain.
public struct CommittedChanges: Sendable {
    /// The values the transaction wrote, one per key, with the versions it allocated.
    public var values: [StoredValue]
    /// The new `lastMutationID` of each client the transaction processed a mutation of.
    public var progress: [ClientProgress]
    /// The rows of collections the transaction wrote or deleted, each write with the row's
    /// fields before and after, in the order they were made.
    public var rows: [RowChange]
    /// When the commit happened, on the store's clock: the time its feed entries carry.
    public var time: Date
    /// The mutation the transaction applied, `nil` for a server-side change.
    public var cause: ChangeCause?
    /// The positions of the commit's entries in the store's change feed (see
    /// ``StoredChange``): the lower bound is the commit's ``StoredChange/commit``; read the feed
    /// after the upper bound to catch up. `nil` when it wrote no value.
    public var feed: ClosedRange<UInt64>?

    /// A commit's changes from their parts.
    public init(
        values: [StoredValue], progress: [ClientProgress], time: Date = Date(), cause: ChangeCause? = nil, feed: ClosedRange<UInt64>? = nil,
        rows: [RowChange] = []
    ) {
        self.values = values
        self.rows = rows
        self.progress = progress
        self.time = time
        self.cause = cause
        self.feed = feed
    }

    /// Whether the transaction changed nothing that a push would carry.
    public var isEmpty: Bool {
        values.isEmpty && progress.isEmpty && rows.isEmpty
    }
}

/// A client's processed mutations: the newest sequence number of `client`'s mutations, applied
/// or refused, under the principal `scope`.
public struct ClientProgress: Sendable, Hashable {
    /// The principal the client acts for (``SyncServer``'s principal id): client ids are chosen
    /// by clients, so their numbers are kept apart per principal.
    public var scope: String
    /// The client.
    public var client: ClientID
    /// The newest sequence number processed.
    public var lastMutationID: UInt64

    /// A client's progress from its parts.
    public init(scope: String, client: ClientID, lastMutationID: UInt64) {
        self.scope = scope
        self.client = client
        self.lastMutationID = lastMutationID
    }
}
