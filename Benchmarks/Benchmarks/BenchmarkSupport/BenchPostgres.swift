import Foundation

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
    private static func script(_ arguments: [String]) throws -> String {
        // The script sits beside this package's sources: Benchmarks/Scripts.
        let root = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
        let process = Process()
        process.executableURL = URL(fileURLWithPath: "/bin/bash")
        process.arguments = [root.appendingPathComponent("Scripts/throwaway-postgres.sh").path] + arguments
        let output = Pipe()
        process.standardOutput = output
        process.standardError = output
        try process.run()
        let printed = String(decoding: output.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
        process.waitUntilExit()
        guard process.terminationStatus == 0 else {
            throw SetupFailure(message: "throwaway-postgres.sh \(arguments.joined(separator: " ")) failed: \(printed)")
        }
        return printed
    }
}
