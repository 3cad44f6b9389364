import Foundation
import Logging
import Synchronization

/// Where `nightride client` logs, since the terminal is its screen: a file, appended to, one
/// line per entry (`<journal>.log`, else `client.log` in the data folder). What the client's
/// libraries say (an inspector that went away, say) ends up there rather than over the screen.
struct ClientLog: LogHandler {
    private let label: String
    private let file: SharedFile
    var logLevel: Logger.Level = .info
    var metadata: Logger.Metadata = [:]

    /// Sends every logger of the process to the file at `path` (its folder made as needed).
    /// Without a file to write to, logging stays as it was: nothing is worth failing the
    /// client for.
    static func bootstrap(path: String) {
        let url = URL(fileURLWithPath: path)
        try? FileManager.default.createDirectory(at: url.deletingLastPathComponent(), withIntermediateDirectories: true)
        if !FileManager.default.fileExists(atPath: path) {
            _ = FileManager.default.createFile(atPath: path, contents: nil, attributes: [.posixPermissions: 0o600])
        }
        guard let handle = try? FileHandle(forWritingTo: url) else { return }
        _ = try? handle.seekToEnd()
        let file = SharedFile(handle)
        LoggingSystem.bootstrap { label in ClientLog(label: label, file: file) }
    }

    private init(label: String, file: SharedFile) {
        self.label = label
        self.file = file
    }

    subscript(metadataKey key: String) -> Logger.Metadata.Value? {
        get { metadata[key] }
        set { metadata[key] = newValue }
    }

    func log(event: LogEvent) {
        let fields = metadata.merging(event.metadata ?? [:]) { $1 }.sorted { $0.key < $1.key }.map { " \($0.key)=\($0.value)" }.joined()
        file.write("\(Date().formatted(.iso8601)) \(event.level) \(label): \(event.message)\(fields)\n")
    }
}

/// One open file, written a line at a time from any thread.
private final class SharedFile: Sendable {
    private let handle: Mutex<FileHandle>

    init(_ handle: FileHandle) {
        self.handle = Mutex(handle)
    }

    func write(_ line: String) {
        handle.withLock { try? $0.write(contentsOf: Data(line.utf8)) }
    }
}
