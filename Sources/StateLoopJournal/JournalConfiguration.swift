/// How a ``Journal`` writes and what it does with a file it cannot read.
public struct JournalConfiguration: Sendable {
    /// The versions of what the app stores (state, events, each store's mutations and confirmed
    /// value) and the migrations from older ones: see ``JournalSchema``.
    public var schema: JournalSchema
    /// Save the state every this many events, and drop the events before it, so that a restore
    /// reads one state and a short tail. `nil` keeps every event and never saves the state.
    public var snapshotInterval: Int?
    /// What a commit survives.
    public var durability: JournalDurability
    /// What opening does with a file it cannot read.
    public var unreadable: UnreadableJournalPolicy
    /// The most events a stored row holds. 1 stores each event alone, coded one at a time, as
    /// StateLoopJournal did before rows (format 1): the benchmarks' baseline, not for apps.
    @_spi(Benchmarks) public var rowCapacity = JournalDatabase.rowCapacity

    /// - Parameters:
    ///   - schema: The stored versions and their migrations.
    ///   - snapshotInterval: Events between saved states; `nil` for never.
    ///   - durability: What a commit survives.
    ///   - unreadable: What opening does with a file it cannot read.
    public init(
        schema: JournalSchema = JournalSchema(),
        snapshotInterval: Int? = 1_000,
        durability: JournalDurability = .processCrash,
        unreadable: UnreadableJournalPolicy = .setAsideAndStartFresh
    ) {
        precondition(
            snapshotInterval.map { $0 > 0 } ?? true,
            "JournalConfiguration.snapshotInterval must be positive, or nil to never snapshot."
        )
        self.schema = schema
        self.snapshotInterval = snapshotInterval
        self.durability = durability
        self.unreadable = unreadable
    }
}

/// What a committed event survives. The journal is a SQLite database in WAL mode either way, so
/// no setting can leave a half-written transaction or a damaged file after a crash.
public enum JournalDurability: Sendable {
    /// A commit reaches the operating system before `send` returns (no `fsync`): a crash or
    /// kill of the app loses nothing that was sent; a power loss or a crash of the operating
    /// system may lose the last commits (never the file). Fast: the default.
    case processCrash
    /// Every commit is flushed to the disk (`fsync`) before `send` returns, so it survives a
    /// power loss too. A commit then costs a disk flush, typically 0.1 to 10 ms.
    case powerLoss
}

/// What ``Journal/init(at:configuration:transient:)`` does when the file exists but cannot be read: it is
/// damaged, written by a newer version, or its state or an event no longer decodes.
public enum UnreadableJournalPolicy: Sendable {
    /// Move the file aside (renamed `<name>.unreadable-<date>`, kept for inspection), start a new
    /// journal, and report what happened in ``Journal/recovery``. The app starts from its initial
    /// state; nothing is deleted.
    case setAsideAndStartFresh
    /// Throw the ``JournalError`` and leave the file as it is, for an app that migrates or asks
    /// the user.
    case fail
}
