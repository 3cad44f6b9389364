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
    /// The journal was written by a newer version of the app (or of StateLoopJournal), which
    /// this one cannot be sure to read.
    case writtenByNewerVersion(path: String, found: Int, current: Int, format: Bool)
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
            .unencodableState(let path, _), .undecodableMutation(let path, _, _), .writtenByNewerVersion(let path, _, _, _),
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
            .writtenByNewerVersion:
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
                + "its new properties defaults or decode the old shape in `init(from:)`, and "
                + "raise `JournalConfiguration.version`."
        case .undecodableEvent(let path, let sequence, let version, let detail):
            "Event \(sequence) in \(path) (written by app version \(version)) no longer decodes: "
                + "\(detail). Keep decoding old event shapes in the Event type's `init(from:)`, "
                + "or raise `JournalConfiguration.version` and let the journal start fresh."
        case .unencodableEvent(let path, let sequence, let detail):
            "Event \(sequence) could not be encoded for \(path): \(detail). It was applied in "
                + "memory but will be missing after a relaunch; make its Codable conformance "
                + "total (JSON has no NaN or infinity, say)."
        case .unencodableState(let path, let detail):
            "The state could not be encoded for \(path): \(detail). No snapshot was saved, so "
                + "restores replay every event; make the State's Codable conformance total."
        case .undecodableMutation(let path, let store, let detail):
            "A pending mutation of store \"\(store)\" in \(path) no longer decodes: \(detail)."
        case .writtenByNewerVersion(let path, let found, let current, let format):
            "\(path) was written by \(format ? "StateLoopJournal format" : "app version") \(found), "
                + "newer than this one (\(current)); an older app cannot read it safely."
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
