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

    /// A commit's changes from their parts.
    public init(values: [StoredValue], progress: [ClientProgress]) {
        self.values = values
        self.progress = progress
    }

    /// Whether the transaction changed nothing that a push would carry.
    public var isEmpty: Bool {
        values.isEmpty && progress.isEmpty
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
