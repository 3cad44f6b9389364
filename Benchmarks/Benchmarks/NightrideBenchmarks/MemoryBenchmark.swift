import Benchmark
import BenchmarkSupport
import Foundation
import Synchronization

/// Resident memory per connected client, with the server in a process of its own: each
/// iteration starts a fresh server process, reads its resident memory before any user, after
/// 1,000 logins, and once the 1,000 clients (in this process) have their push sockets open.
func registerMemoryBenchmark() {
    let reportedClients = Atomic<Bool>(false)
    let lines = Mutex<[String]>([])
    Benchmark(
        "Nightride: server memory per connected client",
        configuration: .init(
            metrics: [.wallClock, .serverPerClient, .serverPerUser, .clientsPerClient, .connectTime],
            warmupIterations: 0,
            scalingFactor: .one,
            maxDuration: .seconds(60),
            maxIterations: 5
        ),
        closure: { benchmark in
            do {
                let server = try NightrideChild.launch()
                defer { server.stop() }
                // The server has started and listens; give it a moment to settle.
                try await Task.sleep(for: .milliseconds(200))
                let serverIdle = server.residentBytes
                let clientsBefore = residentBytes()
                let start = ContinuousClock.now
                let users = try await logIn(count: clientCount, server: server.url)
                try await Task.sleep(for: .milliseconds(200))
                let serverLoggedIn = server.residentBytes
                let fleet = try await ClientFleet.connect(users)
                let connected = start.duration(to: .now)
                // The clients' side of each socket is open: let the server's side finish too.
                try await Task.sleep(for: .milliseconds(500))
                let serverConnected = server.residentBytes
                let clientsAfter = residentBytes()
                fleet.stop()
                lines.withLock {
                    $0.append(
                        "server process: \(serverIdle) B idle, +\((serverLoggedIn - serverIdle) / clientCount) B per logged-in user, "
                            + "+\((serverConnected - serverIdle) / clientCount) B per connected client; "
                            + "client process: +\((clientsAfter - clientsBefore) / clientCount) B per client"
                    )
                }
                benchmark.measurement(.serverPerUser, (serverLoggedIn - serverIdle) / clientCount)
                benchmark.measurement(.serverPerClient, (serverConnected - serverIdle) / clientCount)
                benchmark.measurement(.connectTime, connected.microseconds / 1_000)
                // Only the first 1,000 clients of this process meet fresh memory: later
                // iterations reuse what the previous ones freed.
                if !reportedClients.exchange(true, ordering: .relaxed) {
                    benchmark.measurement(.clientsPerClient, (clientsAfter - clientsBefore) / clientCount)
                }
                // Let the sockets close before the server process goes.
                try await Task.sleep(for: .milliseconds(500))
            } catch {
                benchmark.error("\(error)")
            }
        },
        teardown: {
            for line in lines.withLock({ $0 }) { report(line) }
        }
    )
}
