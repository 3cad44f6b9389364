import Benchmark
import Foundation

// Entry point found by the BenchmarkPlugin boilerplate: the Nightride benchmarks, a target of
// their own so that they can be run alone (`swift package benchmark --target NightrideBenchmarks`).
let benchmarks: @Sendable () -> Void = {
    // The same executable, started by the memory benchmark, is the server process.
    if ProcessInfo.processInfo.environment[NightrideChild.roleVariable] != nil {
        NightrideChild.runAsServer()
    }
    registerFanOutBenchmark()
    registerMemoryBenchmark()
    registerSocketScaleBenchmark()
    registerLongHistoryBenchmarks()
}

/// How many simulated clients (users, each with one push socket) every benchmark connects.
let clientCount = 1_000

extension BenchmarkMetric {
    /// From the start of `server.update` to a client's subscriber having the new version: one
    /// sample per client per round.
    static let pushLatency = BenchmarkMetric.custom("Push latency per client (µs)", useScalingFactor: false)
    /// The median of one round's 1,000 latencies: one sample per round.
    static let roundMedian = BenchmarkMetric.custom("Round p50 of push latency (µs)", useScalingFactor: false)
    /// The 99th percentile of one round's 1,000 latencies: one sample per round.
    static let roundP99 = BenchmarkMetric.custom("Round p99 of push latency (µs)", useScalingFactor: false)
    /// How long `server.update` holds the server's lock: 1,000 changes applied, logged and
    /// queued on 1,000 sockets.
    static let serverUpdate = BenchmarkMetric.custom("server.update, 1,000 changes queued (µs)", useScalingFactor: false)
    /// Resident memory of the one process (server and clients) per connected client.
    static let processPerClient = BenchmarkMetric.custom("Process RSS per client, server + client (bytes)", useScalingFactor: false)
    /// Resident memory of the server process per logged-in user with an open push socket.
    static let serverPerClient = BenchmarkMetric.custom("Server RSS per connected client (bytes)", useScalingFactor: false)
    /// Resident memory of the server process per logged-in user, before any socket.
    static let serverPerUser = BenchmarkMetric.custom("Server RSS per logged-in user, no socket (bytes)", useScalingFactor: false)
    /// Resident memory of the clients' process per client.
    static let clientsPerClient = BenchmarkMetric.custom("Client process RSS per client (bytes)", useScalingFactor: false)
    /// Time to log in and connect 1,000 clients.
    static let connectTime = BenchmarkMetric.custom("Log in and connect 1,000 clients (ms)", useScalingFactor: false)
}

extension Duration {
    var microseconds: Int {
        Int(components.seconds * 1_000_000 + components.attoseconds / 1_000_000_000_000)
    }
}

/// The value at `fraction` (0…1) of sorted `values`, nearest rank.
func percentile(_ fraction: Double, of sorted: [Duration]) -> Duration {
    guard !sorted.isEmpty else { return .zero }
    let rank = Int((fraction * Double(sorted.count)).rounded(.up))
    return sorted[min(max(rank, 1), sorted.count) - 1]
}

/// Prints exact figures on standard error, beside the tool's tables (which round large numbers to
/// thousands).
func report(_ line: String) {
    FileHandle.standardError.write(Data("[Nightride] \(line)\n".utf8))
}
