import Foundation
import GRDB

extension SQLiteStore {
    /// Why a store file could not be opened, in words that say what to do: its folder is
    /// missing or read-only, the file is not a SQLite database, another process holds it, or
    /// the disk is full.
    public struct OpenFailure: Error, CustomStringConvertible {
        /// What is wrong, and how to fix it.
        public let description: String

        init(description: String) {
            self.description = description
        }

        /// The failure SQLite's `error` means for the file at `path`.
        init(_ error: DatabaseError, path: String) {
            let folder = (path as NSString).deletingLastPathComponent
            let files = FileManager.default
            switch error.resultCode {
            case .SQLITE_CANTOPEN:
                if !folder.isEmpty, !files.fileExists(atPath: folder) {
                    description = "cannot open \(path): the folder \(folder) does not exist (create it, or choose another file)"
                } else if !folder.isEmpty, !files.isWritableFile(atPath: folder) {
                    description = "cannot open \(path): this process cannot write in \(folder) (the store keeps its journal beside the file)"
                } else {
                    description = "cannot open \(path): \(error.message ?? "\(error)")"
                }
            case .SQLITE_NOTADB:
                description = "\(path) is not a SQLite database (a damaged or foreign file): put a backup back, or choose another file"
            case .SQLITE_BUSY, .SQLITE_LOCKED:
                description = "\(path) is held by another process (a server already running on it?): stop it, or choose another file"
            case .SQLITE_READONLY:
                description = "cannot write \(path): the file or its folder is read-only for this process"
            case .SQLITE_FULL:
                description = "cannot write \(path): the disk is full"
            case .SQLITE_CORRUPT:
                description = "\(path) is damaged: put a backup back (SQLiteStore.restore(from:to:))"
            default:
                description = "cannot open \(path): \(error.message ?? "\(error)")"
            }
        }
    }
}
