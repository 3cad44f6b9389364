import Benchmark
import BenchmarkSupport
import Foundation
import Hummingbird
import Logging
@_spi(Benchmarks) import StateLoopServer
import Synchronization

/// How many push sockets the broadcast benchmark holds open on one server process.
let broadcastSocketCount = 10_000

/// The kit's fan-out at scale: one `SyncServer` in a process of its own (this executable,
/// started again as ``BroadcastServer``) serving one key that every principal may read, and
/// 10,000 light sockets on it (``SocketFleet``), one per principal, from this process. A round is
/// one change that affects all 10,000 users: one write of that key, from the server's own
/// `update`, and ends when the 10,000th frame of it has arrived.
func registerBroadcastBenchmark() {
    // The kit as it runs, then its baseline in the same run: each socket encoding and framing
    // its own push, its drain scheduled on its own; and the kit read by NIO channels, as the
    // benchmark read before session 14, to show what the reader costs.
    let variants: [(String, Bool, SocketFleet.Reader)] = [
        ("", true, .raw), (", per socket (baseline)", false, .raw), (", read by NIO channels", true, .nio),
    ]
    for (name, encodesOnce, reader) in variants {
        registerBroadcastBenchmark(name: name, encodesOnce: encodesOnce, reader: reader)
    }
}

private func registerBroadcastBenchmark(name: String, encodesOnce: Bool, reader: SocketFleet.Reader) {
    let box = FixtureBox<SocketFleet>()
    Benchmark(
        "Server: one change to 10,000 push sockets (one key every user reads)\(name)",
        configuration: .init(
            metrics: [.wallClock, .broadcastLastFrame, .broadcastUpdate, .broadcastPerSocket],
            warmupIterations: 3,
            scalingFactor: .one,
            maxDuration: .seconds(120),
            maxIterations: 30
        ),
        closure: { benchmark in
            guard let fleet = box.current else { return }
            do {
                let (lastFrame, update) = try await fleet.round { "write \($0)" }
                benchmark.measurement(.broadcastLastFrame, Int(lastFrame / .microseconds(1)))
                benchmark.measurement(.broadcastUpdate, update)
                benchmark.measurement(.broadcastPerSocket, fleet.perSocket)
            } catch {
                benchmark.error("\(error)")
            }
        },
        setup: {
            let server = try ChildServer.launch(
                role: BroadcastServer.roleVariable, environment: [BroadcastServer.encodeEachVariable: encodesOnce ? "0" : "1"])
            try await Task.sleep(for: .milliseconds(300))
            let fleet = try await SocketFleet.open(
                on: server, authorizations: (0..<broadcastSocketCount).map { "Bearer user-\($0)" }, path: "/notice/push",
                serverBefore: server.residentBytes, reader: reader
            )
            FileHandle.standardError.write(
                Data("[Server] \(broadcastSocketCount) sockets open; server process +\(fleet.perSocket) B per socket\n".utf8))
            try await fleet.waitForProfiler()
            box.set(fleet)
        },
        teardown: { await box.take()?.stop() }
    )
}

/// The broadcast benchmark's server process: a `SyncServer` on an in-memory SQLite store with one
/// key, `notice/all`, that any principal may read. Its one command, `write N`, writes N to it
/// with `update` and answers `done MICROSECONDS`: how long the write took, its pushes queued.
enum BroadcastServer {
    static let roleVariable = "STATELOOP_BENCHMARK_BROADCAST_SERVER"
    /// Set to 1 for the baseline: every socket encodes its own push.
    static let encodeEachVariable = "STATELOOP_BENCHMARK_ENCODE_EACH"

    static let notice = ServerResource("notice", of: Int.self)

    /// Anyone with a bearer token is that token's principal; everyone reads the notice.
    struct Everyone: AccessPolicy {
        func principal(for request: Request) async throws -> String? {
            request.bearerToken
        }
        func id(of user: String) -> String { user }
        func mayRead(_ key: ResourceKey, as user: String) -> Bool { key.resource == "notice" }
        func mayWrite(_ key: ResourceKey, as user: String) -> Bool { false }
    }

    /// The server process's whole life: called instead of registering benchmarks when the role
    /// variable is set.
    static func runAsServer() -> Never {
        raiseFileDescriptorLimit()
        let logger = {
            var logger = Logger(label: "bench")
            logger.logLevel = .critical
            return logger
        }()
        guard let store = try? SQLiteStore() else { exit(1) }
        var configuration = SyncServerConfiguration()
        configuration.encodesPushesOnce = ProcessInfo.processInfo.environment[encodeEachVariable] != "1"
        let server = SyncServer(store: store, access: Everyone(), configuration: configuration, logger: logger)
        server.serve(notice, at: "notice") { _, _ in "all" }
        guard
            let port = try? runBlocking({
                try await server.update { transaction in try transaction.write(0, to: notice, "all") }
                return try await MutationFixture.serve(server, logger: logger).port
            })
        else {
            FileHandle.standardError.write(Data("the broadcast server did not start\n".utf8))
            exit(1)
        }
        ChildServer.serve(port: port) { line in
            guard line.hasPrefix("write "), let value = Int(line.dropFirst(6)) else { return "unknown command: \(line)" }
            do {
                let took = try runBlocking {
                    let start = ContinuousClock.now
                    try await server.update { transaction in try transaction.write(value, to: notice, "all") }
                    return start.duration(to: .now)
                }
                return "done \(Int(took / .microseconds(1)))"
            } catch {
                return "failed: \(error)"
            }
        }
    }
}

extension BenchmarkMetric {
    /// From asking the server for the change to the last of the 10,000 frames: one sample per round.
    static let broadcastLastFrame = BenchmarkMetric.custom("Change to last of 10,000 frames (µs)", useScalingFactor: false)
    /// Inside the server process: the write, its commit and its pushes queued on every socket.
    static let broadcastUpdate = BenchmarkMetric.custom("Server write, queued on 10,000 sockets (µs)", useScalingFactor: false)
    /// Resident memory of the server process per open push socket.
    static let broadcastPerSocket = BenchmarkMetric.custom("Server RSS per push socket (bytes)", useScalingFactor: false)
}
