import Benchmark
import BenchmarkSupport
import Foundation
import NightrideClient

/// How many push sockets the scale benchmark holds open on one server process.
let scaleSocketCount = 10_000

/// One server process (this executable, started again as ``NightrideChild``) with 10,000 push
/// sockets open from light sockets in this process, which only read frames (``SocketFleet``).
/// Each round is one server-side change that affects every user (one transaction setting all
/// 10,000 driver modes): the time from asking the server for it to the last of the 10,000
/// frames arriving. Setup reads the server's resident memory before and after the sockets.
func registerSocketScaleBenchmark() {
    let box = FixtureBox<SocketFleet>()
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
            guard let fleet = box.current else { return }
            do {
                let (lastFrame, update) = try await fleet.round { round in "flip \(round % 2 == 1 ? "on" : "off") \(scaleSocketCount)" }
                benchmark.measurement(.lastFrame, lastFrame.microseconds)
                benchmark.measurement(.scaleServerUpdate, update)
                benchmark.measurement(.serverPerSocket, fleet.perSocket)
            } catch {
                benchmark.error("\(error)")
            }
        },
        setup: { box.set(try await openFleet()) },
        teardown: { await box.take()?.stop() }
    )
}

/// The server process with every user logged in and their driver-mode sockets open.
private func openFleet() async throws -> SocketFleet {
    let server = try NightrideChild.launch()
    let start = ContinuousClock.now
    let users: [NightrideAPI]
    do {
        users = try await logIn(count: scaleSocketCount, server: server.url)
        try await Task.sleep(for: .milliseconds(500))
    } catch {
        server.stop()
        throw error
    }
    let loggedIn = server.residentBytes
    let fleet = try await SocketFleet.open(
        on: server, authorizations: users.map { "Bearer \($0.token)" }, path: "/me/driver-mode/push", serverBefore: loggedIn
    )
    report(
        "server process \(server.processIdentifier): \(scaleSocketCount) users logged in and their sockets open in \(start.duration(to: .now)); "
            + "server process: \(loggedIn) B with every user logged in: +\(fleet.perSocket) B per socket"
    )
    try await fleet.waitForProfiler()
    return fleet
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
