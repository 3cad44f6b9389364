import Configuration
import Foundation
import SystemPackage

/// What `nightride server` reads besides its flags, through swift-configuration: the
/// environment first, then the JSON file `--config` names. A flag given wins over both.
///
/// | setting | environment | JSON file |
/// | --- | --- | --- |
/// | the address to listen on | `NIGHTRIDE_HOST` | `{"nightride": {"host": "0.0.0.0"}}` |
/// | the port | `PORT` | `{"port": 8080}` |
/// | the PostgreSQL database | `DATABASE_URL` | `{"database": {"url": "postgres://…"}}` |
/// | the SQLite file | `NIGHTRIDE_DATA` | `{"nightride": {"data": "/var/lib/nightride/server.sqlite"}}` |
/// | the log level | `LOG_LEVEL` | `{"log": {"level": "info"}}` |
/// | the log format | `LOG_FORMAT` | `{"log": {"format": "json"}}` |
///
/// The database URL is a secret (it may hold a password): the reader never shows it, and the
/// command refuses it with a password as a flag, where `ps` would show it to every user. The
/// address is `NIGHTRIDE_HOST`, not `HOST`: tcsh and zsh set `HOST` to the machine's name, which
/// would open the server to the network unasked.
struct ServerSettings {
    private let reader: ConfigReader

    /// The settings of this process's environment and, if given, of the JSON file at `path`.
    ///
    /// - Throws: ``StartUpError`` when the file is missing or is not JSON.
    static func load(file path: String?) async throws -> ServerSettings {
        var providers: [any ConfigProvider] = [EnvironmentVariablesProvider(secretsSpecifier: .specific(["DATABASE_URL"]))]
        if let path {
            guard FileManager.default.fileExists(atPath: path) else { throw StartUpError(description: "--config \(path): no such file") }
            do {
                providers.append(try await FileProvider<JSONSnapshot>(filePath: FilePath(path)))
            } catch {
                throw StartUpError(description: "--config \(path) is not a JSON object of settings: \(error.localizedDescription)")
            }
        }
        return ServerSettings(reader: ConfigReader(providers: providers))
    }

    /// `flag` if given, else the setting `key` as text.
    func string(_ flag: String?, _ key: ConfigKey, isSecret: Bool = false) -> String? {
        flag ?? reader.string(forKey: key, isSecret: isSecret)
    }

    /// `flag` if given, else the setting `key` as a whole number (from text too: the
    /// environment has only text).
    ///
    /// - Throws: ``StartUpError`` for a setting that is not a whole number.
    func int(_ flag: Int?, _ key: ConfigKey, name: String) throws -> Int? {
        if let flag { return flag }
        if let number = reader.int(forKey: key) { return number }
        guard let text = reader.string(forKey: key) else { return nil }
        guard let number = Int(text) else { throw StartUpError(description: "\(name) is \(text), not a whole number") }
        return number
    }
}
