import Benchmark
import BenchmarkSupport
import Foundation
import Logging
import NightrideServer
import StateLoopServer
import StateLoopWire
import Synchronization

/// A server started on a data file with a long history, as `nightride server` starts one: the
/// time until it listens, and the resident memory each commit adds while it runs (the server
/// reads none of the history at start and holds nothing per commit; the truth the demo and the
/// tests check against is NightrideHarness's, read from the feed when asked).
///
/// The file is made once per process: `STATELOOP_HISTORY_COMMITS` commits (1,000,000 by
/// default), one value each, written straight to the store.
func registerLongHistoryBenchmarks() {
    Benchmark(
        "Nightride: start on a long history",
        configuration: .init(
            metrics: [.wallClock, .startToListen, .bytesPerCommit],
            warmupIterations: 0,
            scalingFactor: .one,
            maxDuration: .seconds(120),
            maxIterations: 3
        ),
        closure: { benchmark in
            do {
                let path = try await LongHistoryFile.shared.path()
                var logger = Logger(label: "bench")
                logger.logLevel = .critical
                let configuration = NightrideServer.Configuration(
                    dataPath: path, durability: .processCrash, inactivityTimeout: nil, passwordCost: 4
                )
                let before = residentBytes()
                let start = ContinuousClock.now
                let server = NightrideServer(configuration: configuration, logger: logger)
                let port = try await server.start()
                benchmark.measurement(.startToListen, start.duration(to: .now).microseconds / 1_000)
                // Memory per commit while it runs: 10,000 driver-mode changes of one user.
                let user = try await logIn(count: 1, server: URL(string: "http://127.0.0.1:\(port)")!)[0].user
                let running = residentBytes()
                for index in 0..<10_000 {
                    try await server.setDriverMode(index % 2 == 0, for: user)
                }
                let after = residentBytes()
                benchmark.measurement(.bytesPerCommit, max(0, after - running) / 10_000)
                report(
                    "start on a long history: listening after \(start.duration(to: .now)) at most; "
                        + "RSS \(before) B before, \(running) B listening, +\(max(0, after - running) / 10_000) B per commit")
                await server.stop()
            } catch {
                benchmark.error("\(error)")
            }
        }
    )
}

/// The data file of the long-history benchmarks, made once per process.
final class LongHistoryFile: Sendable {
    static let shared = LongHistoryFile()

    private let made = Mutex<String?>(nil)

    /// The file's path, making it first if this process has not yet (benchmarks run one at a
    /// time, so no two make it at once).
    func path() async throws -> String {
        if let made = made.withLock({ $0 }) { return made }
        let commits = ProcessInfo.processInfo.environment["STATELOOP_HISTORY_COMMITS"].flatMap(Int.init) ?? 1_000_000
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("stateloop-history-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        let path = folder.appendingPathComponent("server.sqlite").path
        let started = ContinuousClock.now
        let store = try SQLiteStore(path: path, durability: .processCrash)
        for index in 0..<commits {
            let key = ResourceKey(resource: "noise", id: "\(index % 1_000)")
            _ = try await store.write { try $0.write(Data("\(index)".utf8), to: key) }
        }
        report("long history: \(commits) commits written in \(started.duration(to: .now))")
        made.withLock { $0 = path }
        return path
    }
}

extension BenchmarkMetric {
    /// From creating the server to its listening, on a file with a long history.
    static let startToListen = BenchmarkMetric.custom("Start to listening (ms)", useScalingFactor: false)
    /// Resident memory added per commit while the server runs.
    static let bytesPerCommit = BenchmarkMetric.custom("RSS added per commit (bytes)", useScalingFactor: false)
}
