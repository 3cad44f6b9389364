import Foundation
import StateLoop
import StateLoopSync
import Synchronization

/// A durable record of one system's events, in a SQLite file: every event is committed before
/// any feedback loop or observer sees the state it produced, and on the next launch the system
/// starts from the state those events lead to, so the effects that state calls for start again.
///
/// ```swift
/// let journal = try Journal<Upload, UploadEvent>(at: documents + "/upload.journal")
/// let uploads = System(
///     journal: journal,
///     initialState: Upload(),
///     reduce: Upload.reduce,
///     feedbacks: [.react(query: \.nextChunk) { chunk in .sent(try await api.send(chunk)) }]
/// )
/// ```
///
/// Opening reads the latest saved state and the events after it; ``recovery`` tells what it
/// found. A file that cannot be read is set aside and replaced by a new one (or, with
/// ``UnreadableJournalPolicy/fail``, reported by a thrown ``JournalError``). While running, a
/// write that fails (a full disk) keeps the events in memory, retries them with the next commit,
/// and reports the error through ``health`` and ``errors()``.
///
/// A journal serves one system, and a file one journal at a time: open it once per launch.
///
/// Threading: `Sendable`. The system calls it synchronously on its actor; ``health`` and the
/// mutation stores may be used from anywhere.
public final class Journal<State: Codable & Sendable, Event: Codable & Sendable>: Sendable {
    /// The journal file.
    public let path: String
    /// The settings it was opened with.
    public let configuration: JournalConfiguration
    /// What opening found.
    public let recovery: JournalRecovery
    /// What opening migrated, when the journal was written by an older version of the app;
    /// `nil` when nothing needed it.
    public let migration: JournalMigrationReport?

    let database: JournalDatabase
    private let isTransient: @Sendable (Event) -> Bool
    private let ledger: Mutex<Writer>
    private let restored: Mutex<Restored?>
    private let errorSubscribers = Subscribers<JournalError>(replaysLatest: false, bufferingPolicy: .unbounded)

    /// Opens the journal at `path`, creating it if needed, and reads what it holds.
    ///
    /// - Parameters:
    ///   - path: The journal file; its folder must exist.
    ///   - configuration: How the journal writes, its stored versions and their migrations,
    ///     and what opening does with a file it cannot read.
    ///   - transient: Says which events change only what the state does not encode (a search
    ///     box, a scroll position): they are reduced and shown as usual, but never written, so
    ///     a relaunch does not bring that state back by replaying them.
    /// - Throws: ``JournalError`` when the file cannot be opened at all (its folder is missing
    ///   or read-only, the disk is full, another process has it), or when it cannot be read and
    ///   `configuration.unreadable` is ``UnreadableJournalPolicy/fail``.
    public init(
        at path: String,
        configuration: JournalConfiguration = JournalConfiguration(),
        transient: @escaping @Sendable (Event) -> Bool = { _ in false }
    ) throws(JournalError) {
        let opened = try Self.open(path: path, configuration: configuration)
        self.isTransient = transient
        self.path = path
        self.configuration = configuration
        self.recovery = opened.recovery
        self.migration = opened.migration
        self.database = opened.database
        self.restored = Mutex(opened.restored)
        self.ledger = Mutex(
            Writer(
                ledger: JournalLedger(
                    lastSequence: opened.lastSequence,
                    snapshotSequence: opened.restored.snapshotSequence,
                    eventsSinceSnapshot: opened.restored.events.count,
                    snapshotInterval: configuration.snapshotInterval
                )
            )
        )
    }

    deinit {
        database.close()
    }

    /// How the journal is doing: what is committed, what is waiting, the last write error.
    public var health: JournalHealth {
        ledger.withLock { $0.ledger.health }
    }

    /// The write errors from now on, for a status line. Each call returns a new stream.
    public func errors() -> AsyncStream<JournalError> {
        errorSubscribers.subscribe()
    }

    /// Commits what is waiting and closes the file. Events recorded after are lost; normally
    /// the journal is closed when released, after its system.
    public func close() {
        commit()
        // Clean only when nothing is left unwritten: the next open then skips the full check.
        if health.unwrittenEvents == 0 {
            try? database.setClosedCleanly(true)
        }
        database.close()
    }

    // MARK: Restore

    /// Hands the restored state to the system being created: the saved state (or
    /// `initialState`) with every later event reduced into it.
    func attach(initialState: State, reduce: (inout State, Event) -> Void) -> State {
        guard let restored = restored.withLock({ $0.take() }) else {
            preconditionFailure(
                """
                This Journal (\(path)) already serves a System. Open one journal per system and \
                create the system once; to start over, release both and open the journal again.
                """
            )
        }
        var state = restored.snapshot ?? initialState
        for event in restored.events {
            reduce(&state, event)
        }
        // A long tail is saved away now, so that the next launch does not replay it again.
        let snapshotNow = ledger.withLock { writer in
            writer.ledger.restored(state)
            return writer.ledger.isSnapshotDue
        }
        if snapshotNow {
            write(force: true)
        }
        return state
    }

    // MARK: Writing

    /// Keeps `event` for the next commit.
    @usableFromInline
    package func record(_ event: Event, producing state: State) {
        if isTransient(event) { return }
        ledger.withLock { $0.ledger.recorded(event, producing: state) }
    }

    /// Writes every recorded event, and the state when one is due, in one transaction.
    @usableFromInline
    package func commit() {
        write(force: false)
    }

    /// Writes as ``commit()`` does; `force` writes a due snapshot even with no new event.
    private func write(force: Bool) {
        let failures = ledger.withLock { writer -> [JournalError] in
            guard force || !writer.ledger.unwritten.isEmpty else { return [] }
            var failures: [JournalError] = []
            let encoded = JournalRows.encode(
                writer.ledger.unwritten, capacity: configuration.rowCapacity, encoder: writer.encoder
            )
            if let last = encoded.unencodable.last {
                failures = encoded.unencodable.map { JournalError.unencodableEvent(path: path, sequence: $0.sequence, detail: $0.detail) }
                writer.ledger.unencodable(
                    Set(encoded.unencodable.map(\.sequence)),
                    failures.last ?? .unencodableEvent(path: path, sequence: last.sequence, detail: last.detail))
            }
            var snapshot: JournalDatabase.Snapshot?
            if let state = writer.ledger.stateToSave {
                do {
                    snapshot = JournalDatabase.Snapshot(
                        sequence: writer.ledger.lastSequence,
                        version: configuration.schema.version(of: .state),
                        payload: try writer.encoder.encode(state)
                    )
                } catch {
                    // The events are committed all the same; only the snapshot waits.
                    let failure = JournalError.unencodableState(path: path, detail: "\(error)")
                    writer.ledger.snapshotSkipped(failure)
                    failures.append(failure)
                }
            }
            do {
                try database.append(encoded.rows, snapshot: snapshot)
                writer.ledger.committed(savedSnapshot: snapshot != nil)
            } catch {
                let failure = JournalDatabase.journalError(error, path: path)
                writer.ledger.failed(failure)
                failures.append(failure)
            }
            return failures
        }
        for failure in failures {
            errorSubscribers.publish(failure)
        }
    }
}

extension Journal: EventRecorder {}

// MARK: - Opening

extension Journal {
    /// What was read from the file, held until the system takes it.
    struct Restored: Sendable {
        var snapshot: State?
        var snapshotSequence: Int64?
        var events: [Event]
    }

    /// The ledger with the encoder it writes with, under one lock.
    struct Writer: @unchecked Sendable {
        // @unchecked: JSONEncoder is a class; it is only used under the journal's lock.
        var ledger: JournalLedger<State, Event>
        let encoder = JSONEncoder()
    }
}
