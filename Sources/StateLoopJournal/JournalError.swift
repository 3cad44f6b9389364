/// Why a journal could not be opened, read or written. Every case names the file, and its
/// description says what happened and what to do.
///
/// None of these ends the app: at launch, ``UnreadableJournalPolicy/setAsideAndStartFresh``
/// moves an unreadable file aside and starts a new one; while running, a write that fails is
/// kept in memory and retried (see ``Journal/health``).
public enum JournalError: Error, Sendable, Equatable, CustomStringConvertible {
    /// The file is not a SQLite database, or its pages are damaged or missing (a truncated copy,
    /// say).
    case corrupt(path: String, detail: String)
    /// The saved state does not decode as the current `State` type: usually a model change
    /// without a migration.
    case undecodableSnapshot(path: String, sequence: Int64, writtenByVersion: Int, detail: String)
    /// The event at `sequence` does not decode as the current `Event` type.
    case undecodableEvent(path: String, sequence: Int64, writtenByVersion: Int, detail: String)
    /// An event could not be encoded, so it lives in memory only; the journal goes on without it.
    case unencodableEvent(path: String, sequence: Int64, detail: String)
    /// The state could not be encoded, so no snapshot was saved; events are still journaled.
    case unencodableState(path: String, detail: String)
    /// A saved pending mutation does not decode as the current mutation type.
    case undecodableMutation(path: String, store: String, detail: String)
    /// The file was written by a newer StateLoopJournal, whose layout (`found`) this one
    /// (`current`) cannot be sure to read.
    case writtenByNewerFormat(path: String, found: Int, current: Int)
    /// The journal holds `kind` at version `stored`, newer than the app's `expected`: written by
    /// a newer version of the app, which an older one cannot read safely.
    case newerSchema(path: String, kind: JournalRecordKind, stored: Int, expected: Int)
    /// The journal holds `kind` at version `stored`, and the app's ``JournalSchema`` has no
    /// migration from it (or from a version between it and `expected`).
    case noMigrationPath(path: String, kind: JournalRecordKind, stored: Int, expected: Int)
    /// A migration of `kind` from version `from` threw, or its result was unusable; the journal
    /// was left as it was.
    case migrationFailed(path: String, kind: JournalRecordKind, from: Int, detail: String)
    /// The disk (or the journal's size limit) is full.
    case diskFull(path: String)
    /// Another process, or another journal in this one, has the file open.
    case inUse(path: String)
    /// The file or its folder cannot be opened or created.
    case cannotOpen(path: String, detail: String)
    /// Any other failure of the storage.
    case storage(path: String, code: Int32, detail: String)

    /// The journal file the error is about.
    public var path: String {
        switch self {
        case .corrupt(let path, _), .undecodableSnapshot(let path, _, _, _),
            .undecodableEvent(let path, _, _, _), .unencodableEvent(let path, _, _),
            .unencodableState(let path, _), .undecodableMutation(let path, _, _), .writtenByNewerFormat(let path, _, _),
            .newerSchema(let path, _, _, _), .noMigrationPath(let path, _, _, _), .migrationFailed(let path, _, _, _),
            .diskFull(let path), .inUse(let path), .cannotOpen(let path, _),
            .storage(let path, _, _):
            path
        }
    }

    /// Whether setting the file aside and starting a new one is the way out. A full disk, a
    /// file in use or a folder that cannot be written is not fixed by a new file.
    public var isUnreadableData: Bool {
        switch self {
        case .corrupt, .undecodableSnapshot, .undecodableEvent, .undecodableMutation,
            .writtenByNewerFormat, .newerSchema, .noMigrationPath, .migrationFailed:
            true
        case .unencodableEvent, .unencodableState, .diskFull, .inUse, .cannotOpen, .storage:
            false
        }
    }

    public var description: String {
        switch self {
        case .corrupt(let path, let detail):
            "The journal at \(path) is damaged (\(detail)). Keep the file for inspection; open the "
                + "journal with the default policy to set it aside and start a new one."
        case .undecodableSnapshot(let path, let sequence, let version, let detail):
            "The state saved in \(path) (after event \(sequence), written by app version "
                + "\(version)) no longer decodes: \(detail). If the State type changed, give "
                + "its new properties defaults, or register a migration of the state from "
                + "version \(version) in the journal's `JournalSchema` (`migrateState(from:)`)."
        case .undecodableEvent(let path, let sequence, let version, let detail):
            "Event \(sequence) in \(path) (written by app version \(version)) no longer decodes: "
                + "\(detail). Register a migration of the events from version \(version) in the "
                + "journal's `JournalSchema` (`migrateEvents(from:)`), or keep decoding the old "
                + "shape in the Event type's `init(from:)`."
        case .unencodableEvent(let path, let sequence, let detail):
            "Event \(sequence) could not be encoded for \(path): \(detail). It was applied in "
                + "memory but will be missing after a relaunch; make its Codable conformance "
                + "total (JSON has no NaN or infinity, say)."
        case .unencodableState(let path, let detail):
            "The state could not be encoded for \(path): \(detail). No snapshot was saved, so "
                + "restores replay every event; make the State's Codable conformance total."
        case .undecodableMutation(let path, let store, let detail):
            "A pending mutation of store \"\(store)\" in \(path) no longer decodes: \(detail)."
        case .writtenByNewerFormat(let path, let found, let current):
            "\(path) was written by StateLoopJournal format \(found), newer than this one "
                + "(\(current)); an older StateLoopJournal cannot read it safely."
        case .newerSchema(let path, let kind, let stored, let expected):
            "\(path) holds \(kind) at version \(stored), newer than this app's \(expected): it was "
                + "written by a newer version of the app, which this one cannot read safely."
        case .noMigrationPath(let path, let kind, let stored, let expected):
            "\(path) holds \(kind) at version \(stored) and this app expects version "
                + "\(expected), with no migration between them. Register the missing steps in the "
                + "journal's `JournalSchema`, one from each version to the next."
        case .migrationFailed(let path, let kind, let from, let detail):
            "The migration of \(kind) from version \(from) failed for \(path): \(detail). The "
                + "journal was left as it was."
        case .diskFull(let path):
            "The disk holding \(path) is full. Events stay in memory and are written as soon as "
                + "there is room; free some space."
        case .inUse(let path):
            "\(path) is open in another process or another Journal. A journal has a single "
                + "writer: open it once and share the instance."
        case .cannotOpen(let path, let detail):
            "Cannot open or create \(path): \(detail). Check that its folder exists and is "
                + "writable."
        case .storage(let path, let code, let detail):
            "SQLite error \(code) on \(path): \(detail)."
        }
    }
}
