import Foundation

#if canImport(Glibc)
    import Glibc
#elseif canImport(Musl)
    import Musl
#elseif canImport(Darwin)
    import Darwin
#endif

/// The inspector's token kept in a file of its owner's, so that an inspector started again has
/// the token it had: the apps it talked to connect again by themselves, and a page left open
/// keeps working after a reload. `stateloop-inspector` keeps it in ``defaultFile(environment:)``.
public enum InspectorToken {
    /// The token kept in `file`. A new one (``InspectorServer/randomToken()``)
    /// is written there, readable by its owner only, when the file is missing or holds no
    /// token, or when `renew` is true; the folders above it are made as needed.
    ///
    /// - Throws: The file system's error when the file cannot be read or written.
    public static func stored(in file: URL, renew: Bool = false) throws -> String {
        if !renew, let kept = read(file) { return kept }
        let replaces = renew || FileManager.default.fileExists(atPath: file.path)
        let token = InspectorServer.randomToken()
        let manager = FileManager.default
        try manager.createDirectory(at: file.deletingLastPathComponent(), withIntermediateDirectories: true, attributes: [.posixPermissions: 0o700])
        // Made with the owner's permissions before the token is in it, then moved over the old
        // file: no moment when another user could read it, or the file is half written.
        let draft = file.deletingLastPathComponent().appendingPathComponent(".\(file.lastPathComponent).\(UUID().uuidString)")
        guard manager.createFile(atPath: draft.path, contents: Data((token + "\n").utf8), attributes: [.posixPermissions: 0o600]) else {
            throw CocoaError(.fileWriteUnknown, userInfo: [NSFilePathErrorKey: draft.path])
        }
        if !replaces {
            // link(2) makes the file only where there is none: of two first starts at once, one
            // token is kept and both return it.
            let linked = link(draft.path, file.path) == 0
            let code = errno
            try? manager.removeItem(at: draft)
            if linked { return token }
            if code == EEXIST, let kept = read(file) { return kept }
            throw CocoaError(
                .fileWriteUnknown,
                userInfo: [NSFilePathErrorKey: file.path, NSUnderlyingErrorKey: POSIXError(POSIXErrorCode(rawValue: code) ?? .EIO)])
        }
        // rename(2) replaces the old file in one step.
        guard rename(draft.path, file.path) == 0 else {
            let code = errno
            try? manager.removeItem(at: draft)
            throw CocoaError(
                .fileWriteUnknown,
                userInfo: [NSFilePathErrorKey: file.path, NSUnderlyingErrorKey: POSIXError(POSIXErrorCode(rawValue: code) ?? .EIO)])
        }
        return token
    }

    /// Where `stateloop-inspector` keeps its token: `$XDG_DATA_HOME/stateloop/inspector-token`
    /// when that is an absolute path, else `~/.local/share/stateloop/inspector-token`; on Apple
    /// platforms `~/Library/Application Support/StateLoop/inspector-token`.
    public static func defaultFile(environment: [String: String] = ProcessInfo.processInfo.environment) -> URL {
        #if canImport(Darwin)
            let home = environment["HOME"] ?? NSHomeDirectory()
            return URL(fileURLWithPath: home + "/Library/Application Support/StateLoop/inspector-token")
        #else
            if let data = environment["XDG_DATA_HOME"], data.hasPrefix("/") {
                return URL(fileURLWithPath: data + "/stateloop/inspector-token")
            }
            let home = environment["HOME"] ?? NSHomeDirectory()
            return URL(fileURLWithPath: home + "/.local/share/stateloop/inspector-token")
        #endif
    }

    /// The token `file` holds, `nil` when it cannot be read or holds none.
    private static func read(_ file: URL) -> String? {
        guard let kept = try? String(contentsOf: file, encoding: .utf8) else { return nil }
        let token = kept.trimmingCharacters(in: .whitespacesAndNewlines)
        return isToken(token) ? token : nil
    }

    /// Whether `text` can be a token: 1 to 256 letters, digits, `-`, `_` and `.`, nothing a
    /// URL's query would need escaped.
    static func isToken(_ text: String) -> Bool {
        !text.isEmpty && text.utf8.count <= 256
            && text.unicodeScalars.allSatisfy { $0.isASCII && (CharacterSet.alphanumerics.contains($0) || "-_.".unicodeScalars.contains($0)) }
    }
}
