/// What ``Journal/init(at:configuration:transient:)`` found.
public enum JournalRecovery: Sendable, Equatable {
    /// There was no journal: the system starts from its initial state.
    case created
    /// The state was restored from the saved state after event `snapshotSequence` (`nil` when
    /// there was none) and the `replayedEvents` events after it.
    case restored(snapshotSequence: Int64?, replayedEvents: Int)
    /// The journal could not be read because of `error`; it was moved to `setAsideAt` and a new
    /// one was started.
    case startedFresh(after: JournalError, setAsideAt: String)
}

/// How a running journal is doing, for a status line or a diagnostics screen.
public struct JournalHealth: Sendable, Equatable {
    /// The sequence number of the last event recorded (0 before any).
    public var lastSequence: Int64
    /// The sequence number of the last event known to be committed.
    public var durableSequence: Int64
    /// The event after which the state was last saved, if any.
    public var snapshotSequence: Int64?
    /// The last write failure, cleared by the next successful commit.
    public var lastError: JournalError?

    /// Events recorded but not committed yet: more than zero only while writes are failing.
    public var unwrittenEvents: Int64 { lastSequence - durableSequence }
}

/// What opening a journal written by an older version of the app migrated (see
/// ``JournalSchema``).
public struct JournalMigrationReport: Sendable, Equatable {
    /// One kind of record brought from one version to another.
    public struct Migrated: Sendable, Equatable {
        /// What was migrated.
        public let kind: JournalRecordKind
        /// The version the journal held.
        public let from: Int
        /// The app's version, which the journal now holds.
        public let to: Int
    }

    /// Each kind migrated: the state, the events, then each store's mutations and confirmed
    /// value.
    public let migrated: [Migrated]
    /// Events a migration dropped.
    public var droppedEvents: Int
    /// Pending mutations a migration dropped; each is reported by the `OptimisticResource`
    /// that loads its store.
    public var droppedMutations: Int
}
