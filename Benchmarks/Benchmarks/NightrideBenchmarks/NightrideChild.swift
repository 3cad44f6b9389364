import BenchmarkSupport
import Foundation
import Logging
import NightrideClient
import NightrideServer
import StateLoopInspector
import Synchronization

/// The Nightride server in a process of its own (a ``ChildServer``), so that its resident memory
/// can be read without the clients'.
///
/// Its one command, `flip on|off COUNT`, sets the driver mode of the users `rider-0000` up to
/// COUNT in one server-side change (one transaction, a push on each of their sockets), and
/// answers `done MICROSECONDS`: how long the change took before its pushes were queued.
enum NightrideChild {
    static let roleVariable = "NIGHTRIDE_BENCHMARK_SERVER"

    /// The variable that gives the server a data file (an fsync per commit); without it, the
    /// data is in memory.
    static let dataVariable = "NIGHTRIDE_BENCHMARK_DATA"

    /// The variable that gives the server an inspector's apps address to report to.
    static let inspectorVariable = "NIGHTRIDE_BENCHMARK_INSPECTOR"

    static func launch(dataPath: String? = nil, inspector: String? = nil) throws -> ChildServer {
        var environment: [String: String] = [:]
        environment[dataVariable] = dataPath
        environment[inspectorVariable] = inspector
        return try ChildServer.launch(role: roleVariable, environment: environment)
    }

    /// The server process's whole life: called instead of registering benchmarks when the role
    /// variable is set.
    static func runAsServer() -> Never {
        raiseFileDescriptorLimit()
        var configuration = NightrideServer.Configuration.benchmark
        configuration.dataPath = ProcessInfo.processInfo.environment[dataVariable]
        configuration.inspector = ProcessInfo.processInfo.environment[inspectorVariable].map { Inspector.nightrideServer(connectingTo: $0) }
        let server = NightrideServer(configuration: configuration, logger: .quiet)
        guard let port = try? runBlocking({ try await server.start() }) else {
            FileHandle.standardError.write(Data("the Nightride server did not start\n".utf8))
            exit(1)
        }
        ChildServer.serve(port: port) { line in run(line, on: server) }
    }

    private static let riderNames = Mutex<[String]>([])

    /// Runs one command and returns its answer.
    private static func run(_ line: String, on server: NightrideServer) -> String {
        let words = line.split(separator: " ")
        guard words.count == 3, words[0] == "flip", let count = Int(words[2]) else { return "unknown command: \(line)" }
        // Named once per count, so that later rounds time the change alone.
        let users = riderNames.withLock { names in
            if names.count != count { names = riders(count) }
            return names
        }
        let on = words[1] == "on"
        do {
            let took = try runBlocking {
                let start = ContinuousClock.now
                try await server.setDriverModes(on, for: users)
                return start.duration(to: .now)
            }
            return "done \(took.microseconds)"
        } catch {
            return "failed: \(error)"
        }
    }
}

extension NightrideServer.Configuration {
    /// Loopback, a free port, no faults, and no inactivity timeout, so that nobody's driver mode
    /// switches off by itself during a run; room for 10,000 push sockets beside the sign-ins'
    /// keep-alive connections (at the default 10,000, the last sockets waited in the backlog
    /// until those connections' idle timeout closed them).
    static var benchmark: Self {
        // The riders sign up by the thousand: bcrypt's cheapest cost keeps that out of the way.
        Self(inactivityTimeout: nil, loginLimits: .scriptedClients, passwordCost: 4, maximumConnections: 20_000, maximumConnectionsPerAddress: 20_000)
    }
}

extension Logger {
    static var quiet: Logger {
        Logger(label: "nightride.benchmark", factory: { _ in SwiftLogNoOpLogHandler() })
    }
}
