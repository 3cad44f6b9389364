/// What a journal stores, each with its own version: the saved state, the events, and for each
/// mutation store its pending mutations and its confirmed value.
public enum JournalRecordKind: Hashable, Sendable, CustomStringConvertible {
    /// The saved state (the snapshot).
    case state
    /// The events after it.
    case events
    /// The pending mutations of the mutation store named `store`.
    case mutations(store: String)
    /// The confirmed value kept by the mutation store named `store`.
    case confirmedValue(store: String)

    public var description: String {
        switch self {
        case .state: "the state"
        case .events: "the events"
        case .mutations(let store): "the mutations of store \"\(store)\""
        case .confirmedValue(let store): "the confirmed value of store \"\(store)\""
        }
    }
}

/// The versions of what the app stores in its journal, and the migrations that bring a journal
/// written by an older version of the app up to them.
///
/// Each kind of record (``JournalRecordKind``) has its own version, 1 until the app says
/// otherwise. When a type's stored shape changes, register a migration from the old version:
/// the version becomes the one after it, and a journal written before is migrated when it is
/// opened, before anything is shown, in one transaction (a crash during it leaves the journal
/// as it was). A migration reads and returns the stored tree, a ``JournalValue``, not the Swift
/// types, which may no longer exist.
///
/// ```swift
/// var schema = JournalSchema()
/// schema.migrateState(from: 1) { state in state.renameField("pickup", to: "origin") }
/// schema.migrateEvents(from: 1) { event in
///     event.enumCase?.name == "rated" ? nil : event      // the case is gone: drop it
/// }
/// schema.migrateMutations(of: "ride", from: 1) { mutation in … }
/// let journal = try Journal<Ride, RideEvent>(at: path, configuration: .init(schema: schema))
/// ```
///
/// A journal written by a newer version of the app, or by a version with no chain of
/// migrations to this one, is unreadable: set aside (or reported, with
/// ``UnreadableJournalPolicy/fail``) with a ``JournalError`` naming both versions.
public struct JournalSchema: Sendable {
    /// One step, from a version to the next; `nil` drops the record.
    typealias Step = @Sendable (JournalValue) throws -> JournalValue?

    private var declared: [JournalRecordKind: Int] = [:]
    private var steps: [JournalRecordKind: [Int: Step]] = [:]

    /// Every kind at version 1, with no migrations.
    public init() {}

    /// The version of `kind` this app writes: the one set by ``setVersion(_:of:)``, or the one
    /// after its newest migration, whichever is higher; 1 for a kind with neither.
    public func version(of kind: JournalRecordKind) -> Int {
        let migrated = steps[kind]?.keys.max().map { $0 + 1 } ?? 1
        return max(declared[kind] ?? 1, migrated)
    }

    /// Declares the version of `kind` without a migration to it: a journal that holds an older
    /// version of `kind` is then set aside rather than misread.
    public mutating func setVersion(_ version: Int, of kind: JournalRecordKind) {
        precondition(version >= 1, "JournalSchema versions start at 1.")
        declared[kind] = version
    }

    /// Migrates the saved state from `version` to `version + 1`.
    public mutating func migrateState(
        from version: Int,
        _ migration: @escaping @Sendable (inout JournalValue) throws -> Void
    ) {
        register(.state, from: version) { value in
            var value = value
            try migration(&value)
            return value
        }
    }

    /// Migrates each event from `version` to `version + 1`; returning `nil` drops the event (a
    /// case that no longer exists, say), and the restore replays the others.
    public mutating func migrateEvents(
        from version: Int,
        _ migration: @escaping @Sendable (JournalValue) throws -> JournalValue?
    ) {
        register(.events, from: version, migration)
    }

    /// Migrates each pending mutation of the store named `store` from `version` to
    /// `version + 1`. The closure gets the mutation itself (its id and status are kept);
    /// returning `nil` drops it, and the `OptimisticResource` that loads the store reports it
    /// through `refusals()`, as a refused mutation, with `mutation` `nil`.
    public mutating func migrateMutations(
        of store: String,
        from version: Int,
        _ migration: @escaping @Sendable (JournalValue) throws -> JournalValue?
    ) {
        register(.mutations(store: store), from: version, migration)
    }

    /// Migrates the confirmed value kept by the store named `store` from `version` to
    /// `version + 1` (the value only: its version and last mutation id are kept).
    public mutating func migrateConfirmedValue(
        of store: String,
        from version: Int,
        _ migration: @escaping @Sendable (inout JournalValue) throws -> Void
    ) {
        register(.confirmedValue(store: store), from: version) { value in
            var value = value
            try migration(&value)
            return value
        }
    }

    private mutating func register(_ kind: JournalRecordKind, from version: Int, _ step: @escaping Step) {
        precondition(version >= 1, "JournalSchema versions start at 1: a migration goes from 1 to 2 first.")
        precondition(
            steps[kind]?[version] == nil,
            "JournalSchema: a second migration of \(kind) from version \(version); register one per version."
        )
        steps[kind, default: [:]][version] = step
    }

    // MARK: Planning

    /// The kinds this schema says anything about: their versions are written to a new journal,
    /// so that a store's rows are never taken for version 1 later.
    var declaredKinds: Set<JournalRecordKind> {
        Set(declared.keys).union(steps.keys)
    }

    /// The steps that bring `kind` from `stored` to ``version(of:)``, oldest first.
    ///
    /// - Throws: ``JournalError/newerSchema(path:kind:stored:expected:)`` or
    ///   ``JournalError/noMigrationPath(path:kind:stored:expected:)``.
    func steps(for kind: JournalRecordKind, from stored: Int, path: String) throws(JournalError) -> [Step] {
        let expected = version(of: kind)
        if stored > expected {
            throw .newerSchema(path: path, kind: kind, stored: stored, expected: expected)
        }
        return try (stored..<expected).map { from throws(JournalError) in
            guard let step = steps[kind]?[from] else {
                throw .noMigrationPath(path: path, kind: kind, stored: stored, expected: expected)
            }
            return step
        }
    }
}
