import Benchmark
import BenchmarkSupport
import Foundation
import NIOCore
import NIOPosix
import NightrideClient
import Synchronization

/// How many push sockets the scale benchmark holds open on one server process.
let scaleSocketCount = 10_000

/// One server process (this executable, started again as ``ServerProcess``) with 10,000 push
/// sockets open from light sockets in this process, which only read frames (``LightSocket``).
/// Each round is one server-side change that affects every user (one transaction setting all
/// 10,000 driver modes): the time from asking the server for it to the last of the 10,000
/// frames arriving. Setup reads the server's resident memory before and after the sockets.
func registerSocketScaleBenchmark() {
    let box = FixtureBox<SocketScaleFixture>()
    Benchmark(
        "Nightride: one change to 10,000 push sockets",
        configuration: .init(
            metrics: [.wallClock, .lastFrame, .scaleServerUpdate, .serverPerSocket],
            warmupIterations: 3,
            scalingFactor: .one,
            maxDuration: .seconds(120),
            maxIterations: 30
        ),
        closure: { benchmark in
            guard let fixture = box.current else { return }
            do {
                try await fixture.round(benchmark)
            } catch {
                benchmark.error("\(error)")
            }
        },
        setup: { box.set(try await SocketScaleFixture.make()) },
        teardown: { await box.take()?.stop() }
    )
}

/// The server process and the open light sockets, built once before the rounds.
final class SocketScaleFixture: Sendable {
    private let server: ServerProcess
    private let group: MultiThreadedEventLoopGroup
    private let channels: [any Channel]
    private let tally: FrameTally
    /// The server's resident memory per open socket, measured in setup.
    private let perSocket: Int
    private let rounds = RoundCounter()

    private init(server: ServerProcess, group: MultiThreadedEventLoopGroup, channels: [any Channel], tally: FrameTally, perSocket: Int) {
        self.server = server
        self.group = group
        self.channels = channels
        self.tally = tally
        self.perSocket = perSocket
    }

    static func make() async throws -> SocketScaleFixture {
        let limit = raiseFileDescriptorLimit()
        guard limit > scaleSocketCount + 1_000 else {
            throw SetupFailure(message: "this process may open \(limit) files: \(scaleSocketCount) sockets need more (ulimit -Hn)")
        }
        let server = try ServerProcess.launch()
        let group = MultiThreadedEventLoopGroup(numberOfThreads: 1)
        do {
            let start = ContinuousClock.now
            let users = try await logIn(count: scaleSocketCount, server: server.url)
            try await Task.sleep(for: .milliseconds(500))
            let loggedIn = server.residentBytes
            let tally = FrameTally()
            // Every socket gets the driver mode as it is once it opens: one frame each.
            tally.expect(scaleSocketCount)
            let channels = try await LightSocket.connect(users: users, port: server.port, path: "/me/driver-mode/push", tally: tally, group: group)
            _ = try await tally.wait(orFailAfter: .seconds(60))
            try await Task.sleep(for: .milliseconds(500))
            let connected = server.residentBytes
            let perSocket = (connected - loggedIn) / scaleSocketCount
            report(
                "server process \(server.processIdentifier): \(scaleSocketCount) users logged in and their sockets open in \(start.duration(to: .now)); server process: "
                    + "\(loggedIn) B with every user logged in, \(connected) B with the sockets open: +\(perSocket) B per socket"
            )
            try await waitForProfiler(of: server)
            return SocketScaleFixture(server: server, group: group, channels: channels, tally: tally, perSocket: perSocket)
        } catch {
            server.stop()
            try? await group.shutdownGracefully()
            throw error
        }
    }

    /// With `NIGHTRIDE_PROFILE_PID_FILE` set, writes the server process's id there and gives a
    /// profiler 3 s to attach before the rounds (see docs/Benchmarks.md).
    private static func waitForProfiler(of server: ServerProcess) async throws {
        guard let path = ProcessInfo.processInfo.environment["NIGHTRIDE_PROFILE_PID_FILE"] else { return }
        try "\(server.processIdentifier)\n".write(toFile: path, atomically: true, encoding: .utf8)
        try await Task.sleep(for: .seconds(3))
    }

    /// One round: asks the server to flip every user's driver mode in one change, and waits for
    /// the one frame each socket gets for it.
    func round(_ benchmark: Benchmark) async throws {
        let round = rounds.next()
        tally.expect(scaleSocketCount * (round + 1))
        let start = ContinuousClock.now
        let answer = try server.command("flip \(round % 2 == 1 ? "on" : "off") \(scaleSocketCount)")
        guard answer.hasPrefix("done "), let update = Int(answer.dropFirst(5)) else {
            throw SetupFailure(message: "the server could not make the change: \(answer)")
        }
        let last = try await tally.wait(orFailAfter: .seconds(30))
        benchmark.measurement(.lastFrame, start.duration(to: last).microseconds)
        benchmark.measurement(.scaleServerUpdate, update)
        benchmark.measurement(.serverPerSocket, perSocket)
    }

    func stop() async {
        for channel in channels {
            channel.close(promise: nil)
        }
        try? await Task.sleep(for: .milliseconds(500))
        server.stop()
        try? await group.shutdownGracefully()
    }
}

/// The rounds played so far.
private final class RoundCounter: Sendable {
    private let count = Mutex(0)

    /// The number of this round, from 1 (the setup's frames were round 0).
    func next() -> Int {
        count.withLock { count in
            count += 1
            return count
        }
    }
}

extension BenchmarkMetric {
    /// From asking the server for the change to the last of the 10,000 frames: one sample per round.
    static let lastFrame = BenchmarkMetric.custom("Change to last of 10,000 frames (µs)", useScalingFactor: false)
    /// Inside the server process, from the start of the change to its pushes queued on every
    /// socket (the transaction, the change log, the hub's fan-out to the outboxes).
    static let scaleServerUpdate = BenchmarkMetric.custom("Server change, 10,000 values written and queued (µs)", useScalingFactor: false)
    /// Resident memory of the server process per open push socket (users logged in before).
    static let serverPerSocket = BenchmarkMetric.custom("Server RSS per push socket (bytes)", useScalingFactor: false)
}
