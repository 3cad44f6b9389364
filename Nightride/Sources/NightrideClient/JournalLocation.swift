import Foundation
import NightrideModel

/// Where a client keeps its journal when not told: in Nightride's ``DataFolder``, one file per
/// user and server, so that two servers (a local one, a staging one) never share a journal:
/// `<user>@<host>-<port>.journal`, with anything but letters, digits, `.`, `_` and `-` spelled
/// as `%XX`.
public enum JournalLocation {
    /// The journal path of `user` on `server` in the ``DataFolder``, creating the folder
    /// (readable by its owner only) when it is missing.
    ///
    /// - Throws: the file system's error when the folder cannot be created.
    public static func journalPath(
        user: String,
        server: URL,
        environment: [String: String] = ProcessInfo.processInfo.environment
    ) throws -> String {
        let folder = DataFolder.path(environment: environment)
        try FileManager.default.createDirectory(
            atPath: folder,
            withIntermediateDirectories: true,
            attributes: [.posixPermissions: 0o700]
        )
        let host = server.host ?? "server"
        let port = server.port.map { "-\($0)" } ?? ""
        return folder + "/" + fileSafe(user) + "@" + fileSafe(host + port) + ".journal"
    }

    /// `text` with every character outside letters, digits, `.`, `_` and `-` as `%XX` bytes, and
    /// a leading `.` escaped too, so that no name can climb folders or hide itself.
    static func fileSafe(_ text: String) -> String {
        var result = ""
        for (index, byte) in text.utf8.enumerated() {
            let scalar = Unicode.Scalar(byte)
            let isPlain = byte < 0x80 && (CharacterSet.alphanumerics.contains(scalar) || byte == 0x5F || byte == 0x2D || (byte == 0x2E && index > 0))
            result += isPlain ? String(scalar) : String(format: "%%%02X", byte)
        }
        return result.isEmpty ? "%" : result
    }
}
