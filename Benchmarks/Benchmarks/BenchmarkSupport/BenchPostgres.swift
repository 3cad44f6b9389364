import Foundation

#if canImport(Glibc)
    import Glibc
#endif

/// A PostgreSQL server of a benchmark's own (`Scripts/throwaway-postgres.sh`): a new cluster in
/// a temporary folder on a free loopback port, with the server's durable defaults, stopped and
/// deleted by ``stop()``.
public final class BenchPostgres: Sendable {
    /// The URL of its database.
    public let url: String
    private let folder: String

    private init(url: String, folder: String) {
        self.url = url
        self.folder = folder
    }

    /// Starts one (a few seconds: `initdb`).
    public static func start() throws -> BenchPostgres {
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("stateloop-bench-pg-\(UUID().uuidString)").path
        let port = 20_000 + Int.random(in: 0..<20_000)
        let printed = try script(["start", folder, "\(port)"])
        guard let url = printed.split(separator: "\n").last.map(String.init), url.hasPrefix("postgres://") else {
            throw SetupFailure(message: "throwaway-postgres.sh printed no URL: \(printed)")
        }
        return BenchPostgres(url: url, folder: folder)
    }

    /// Stops it and deletes its folder.
    public func stop() {
        _ = try? Self.script(["stop", folder])
    }

    /// Runs the script with `arguments`; returns what it printed, or throws with it.
    ///
    /// Spawned and waited for with `posix_spawn` and `waitpid`: Foundation's `Process` never
    /// saw the script end inside the benchmark's process (its `waitUntilExit` hung).
    private static func script(_ arguments: [String]) throws -> String {
        // The script sits beside this package's sources: Benchmarks/Scripts.
        let root = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
        let output = FileManager.default.temporaryDirectory.appendingPathComponent("bench-pg-\(UUID().uuidString).out").path
        defer { try? FileManager.default.removeItem(atPath: output) }
        let quoted = ([root.appendingPathComponent("Scripts/throwaway-postgres.sh").path] + arguments).map { "'\($0)'" }.joined(separator: " ")
        let argv = ["/bin/bash", "-c", "\(quoted) > '\(output)' 2>&1 < /dev/null"]
        var cArguments = argv.map { strdup($0) } + [nil]
        defer { for argument in cArguments { free(argument) } }
        var pid: pid_t = 0
        guard posix_spawn(&pid, "/bin/bash", nil, nil, &cArguments, environ) == 0 else {
            throw SetupFailure(message: "could not start throwaway-postgres.sh")
        }
        var status: Int32 = 0
        while waitpid(pid, &status, 0) == -1 && errno == EINTR {}
        let printed = (try? String(contentsOfFile: output, encoding: .utf8)) ?? ""
        guard status == 0 else {
            throw SetupFailure(message: "throwaway-postgres.sh \(arguments.joined(separator: " ")) failed (\(status)): \(printed)")
        }
        return printed
    }
}
