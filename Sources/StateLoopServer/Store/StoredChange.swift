import Foundation
import StateLoopWire

/// One entry of a store's change feed: a value as one commit wrote it, where in the feed it
/// stands, when it was committed, and the mutation that caused it.
///
/// The feed keeps every write, not only the newest value of each key: read it to follow a
/// store from another process (``ServerStore/changes(after:limit:)``), to audit what a
/// mutation did, or to catch up on commits an observer missed.
public struct StoredChange: Sendable, Hashable {
    /// The entry's position in the feed: rises by at least one per entry, in commit order.
    public var sequence: UInt64
    /// The position of the first entry of the same commit: entries that share it were
    /// committed together.
    public var commit: UInt64
    /// When the commit happened, on the store's clock.
    public var time: Date
    /// The value written, with the version allocated for it.
    public var value: StoredValue
    /// The mutation the commit applied; `nil` for a server-side change or a new epoch's
    /// relabelling.
    public var cause: ChangeCause?

    /// An entry from its parts.
    public init(sequence: UInt64, commit: UInt64, time: Date, value: StoredValue, cause: ChangeCause?) {
        self.sequence = sequence
        self.commit = commit
        self.time = time
        self.value = value
        self.cause = cause
    }
}

/// The mutation behind a commit: its id and the principal it was applied for.
public struct ChangeCause: Sendable, Hashable {
    /// The principal's id (``AccessPolicy/id(of:)``), the scope of its mutation ids.
    public var scope: String
    /// The mutation's id, as the client sent it.
    public var mutation: MutationID

    /// A cause from its parts.
    public init(scope: String, mutation: MutationID) {
        self.scope = scope
        self.mutation = mutation
    }
}
