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

    let database: JournalDatabase
    private let isTransient: @Sendable (Event) -> Bool
    private let ledger: Mutex<Writer>
    private let restored: Mutex<Restored?>
    private let errorSubscribers = Subscribers<JournalError>(replaysLatest: false, bufferingPolicy: .unbounded)

    /// Opens the journal at `path`, creating it if needed, and reads what it holds.
    ///
    /// - Parameters:
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

    /// Encodes `event` for the next commit.
    @usableFromInline
    package func record(_ event: Event, producing state: State) {
        if isTransient(event) { return }
        let failure = ledger.withLock { writer -> JournalError? in
            let sequence = writer.ledger.nextSequence
            do {
                let payload = try writer.encoder.encode(event)
                writer.ledger.recorded(
                    EncodedEvent(sequence: sequence, payload: payload),
                    producing: state
                )
                return nil
            } catch {
                let failure = JournalError.unencodableEvent(path: path, sequence: sequence, detail: "\(error)")
                writer.ledger.reported(failure)
                return failure
            }
        }
        if let failure {
            errorSubscribers.publish(failure)
        }
    }

    /// Writes every recorded event, and the state when one is due, in one transaction.
    @usableFromInline
    package func commit() {
        write(force: false)
    }

    /// Writes as ``commit()`` does; `force` writes a due snapshot even with no new event.
    private func write(force: Bool) {
        let failure = ledger.withLock { writer -> JournalError? in
            guard force || !writer.ledger.unwritten.isEmpty else { return nil }
            var snapshot: JournalDatabase.Snapshot?
            if let state = writer.ledger.stateToSave {
                do {
                    snapshot = JournalDatabase.Snapshot(
                        sequence: writer.ledger.lastSequence,
                        version: configuration.version,
                        payload: try writer.encoder.encode(state)
                    )
                } catch {
                    let failure = JournalError.unencodableState(path: path, detail: "\(error)")
                    writer.ledger.snapshotSkipped(failure)
                    return failure
                }
            }
            do {
                try database.append(writer.ledger.unwritten, snapshot: snapshot)
                writer.ledger.committed(savedSnapshot: snapshot != nil)
                return nil
            } catch {
                let failure = JournalDatabase.journalError(error, path: path)
                writer.ledger.failed(failure)
                return failure
            }
        }
        if let failure {
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
        var ledger: JournalLedger<State>
        let encoder = JSONEncoder()
    }

    private struct Opened {
        let database: JournalDatabase
        let restored: Restored
        let lastSequence: Int64
        var recovery: JournalRecovery
    }

    private static func open(path: String, configuration: JournalConfiguration) throws(JournalError) -> Opened {
        let existed = FileManager.default.fileExists(atPath: path)
        do {
            return try read(path: path, configuration: configuration, existed: existed)
        } catch where error.isUnreadableData && configuration.unreadable == .setAsideAndStartFresh {
            let setAside = try JournalFiles.setAside(path)
            var fresh = try read(path: path, configuration: configuration, existed: false)
            fresh.recovery = .startedFresh(after: error, setAsideAt: setAside)
            return fresh
        }
    }

    private static func read(path: String, configuration: JournalConfiguration, existed: Bool) throws(JournalError) -> Opened {
        // A file with a WAL beside it (a crash image) is read whole through a read-only
        // connection before one that can write touches it: closing a writing connection
        // checkpoints the WAL into the main file, so a file found unreadable would not be set
        // aside (or, with `.fail`, left) as the crash left it. The writer opens once everything
        // was read. Without a WAL, a writer's close changes nothing, and one connection does.
        let hasWAL = FileManager.default.fileExists(atPath: path + "-wal")
        var contents = Contents()
        if existed && hasWAL {
            // The reader shares the WAL through a `-shm` file it may create: removed after it,
            // so that the files are the ones found, and no more.
            let hadSHM = FileManager.default.fileExists(atPath: path + "-shm")
            defer { if !hadSHM { try? FileManager.default.removeItem(atPath: path + "-shm") } }
            let reader = try JournalDatabase(path: path, durability: configuration.durability, readOnly: true)
            defer { reader.close() }
            contents = try readContents(of: reader, configuration: configuration)
        }
        let database = try JournalDatabase(path: path, durability: configuration.durability)
        do {
            if existed && !hasWAL {
                contents = try readContents(of: database, configuration: configuration)
            }
            try database.createTablesIfNeeded()
            if contents.storedVersion != configuration.version {
                try database.setVersion(configuration.version)
            }
            try database.setClosedCleanly(false)
            let recovery: JournalRecovery =
                contents.storedVersion != nil
                ? .restored(snapshotSequence: contents.restored.snapshotSequence, replayedEvents: contents.restored.events.count)
                : .created
            return Opened(database: database, restored: contents.restored, lastSequence: contents.lastSequence, recovery: recovery)
        } catch {
            database.close()
            throw JournalDatabase.journalError(error, path: path)
        }
    }

    /// What an existing file holds, decoded.
    private struct Contents {
        var storedVersion: Int?
        var restored = Restored(snapshot: nil, snapshotSequence: nil, events: [])
        var lastSequence: Int64 = 0
    }

    /// Checks and decodes an existing file; reads only.
    private static func readContents(of reader: JournalDatabase, configuration: JournalConfiguration) throws(JournalError) -> Contents {
        let path = reader.path
        var contents = Contents()
        guard try reader.inspect() > 0 else { return contents }
        // Every page is checked only after a session that did not end cleanly: the check reads
        // the whole file, and after a clean close the pages read below are checked as they
        // are read (a damaged one is an error, and the file is set aside all the same).
        if try !reader.closedCleanly() {
            try reader.checkPages()
        }
        contents.storedVersion = try reader.storedVersion()
        if let storedVersion = contents.storedVersion, storedVersion > configuration.version {
            throw JournalError.writtenByNewerVersion(
                path: path, found: storedVersion, current: configuration.version, format: false
            )
        }
        let writtenBy = contents.storedVersion ?? configuration.version
        let decoder = JSONDecoder()
        if let snapshot = try reader.snapshot() {
            do {
                contents.restored.snapshot = try decoder.decode(State.self, from: snapshot.payload)
                contents.restored.snapshotSequence = snapshot.sequence
            } catch {
                throw JournalError.undecodableSnapshot(
                    path: path, sequence: snapshot.sequence, writtenByVersion: snapshot.version,
                    detail: "\(error)"
                )
            }
        }
        contents.lastSequence = contents.restored.snapshotSequence ?? 0
        try reader.forEachEvent(after: contents.lastSequence) { sequence, payload throws(JournalError) in
            do {
                contents.restored.events.append(try decoder.decode(Event.self, from: payload))
                contents.lastSequence = sequence
            } catch {
                throw JournalError.undecodableEvent(
                    path: path, sequence: sequence, writtenByVersion: writtenBy, detail: "\(error)"
                )
            }
        }
        return contents
    }
}
