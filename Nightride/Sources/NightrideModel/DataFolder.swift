import Foundation

/// Where Nightride keeps its files when not told: the platform's folder for application data,
/// shared by the client's journals and the server's data file.
///
/// - Linux and other Unix systems: `$XDG_DATA_HOME/nightride` when that is an absolute path,
///   else `~/.local/share/nightride` (the XDG base directory rules).
/// - Apple platforms: `~/Library/Application Support/Nightride`.
public enum DataFolder {
    /// The folder's path, from `environment` (the process's own by default). Not created.
    public static func path(environment: [String: String] = ProcessInfo.processInfo.environment) -> String {
        #if canImport(Darwin)
            let home = environment["HOME"] ?? NSHomeDirectory()
            return home + "/Library/Application Support/Nightride"
        #else
            if let data = environment["XDG_DATA_HOME"], data.hasPrefix("/") {
                return data + "/nightride"
            }
            let home = environment["HOME"] ?? NSHomeDirectory()
            return home + "/.local/share/nightride"
        #endif
    }
}
