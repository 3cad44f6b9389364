import BenchmarkSupport
import Foundation
import Logging
import NightrideServer
import Synchronization

/// A Nightride server in a process of its own, so that its resident memory can be read without
/// the clients': this benchmark executable, started again with ``ServerProcess/roleVariable``
/// set. It prints `PORT <n>` once listening and exits when its standard input closes (when the
/// benchmark ends it, or dies).
final class ServerProcess: Sendable {
    static let roleVariable = "NIGHTRIDE_BENCHMARK_SERVER"

    private let process: Process
    private let input: Pipe
    let port: Int

    private init(process: Process, input: Pipe, port: Int) {
        self.process = process
        self.input = input
        self.port = port
    }

    var url: URL {
        URL(string: "http://127.0.0.1:\(port)")!
    }

    var residentBytes: Int {
        NightrideBenchmarks.residentBytes(of: "\(process.processIdentifier)")
    }

    static func launch() throws -> ServerProcess {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: try FileManager.default.destinationOfSymbolicLink(atPath: "/proc/self/exe"))
        process.arguments = []
        var environment = ProcessInfo.processInfo.environment
        environment[roleVariable] = "1"
        process.environment = environment
        let input = Pipe()
        let output = Pipe()
        process.standardInput = input
        process.standardOutput = output
        try process.run()
        var text = ""
        while !text.contains("\n") {
            let data = output.fileHandleForReading.availableData
            guard !data.isEmpty else {
                throw SetupFailure(message: "the server process ended before listening: \(text)")
            }
            text += String(decoding: data, as: UTF8.self)
        }
        guard let line = text.split(separator: "\n").first, line.hasPrefix("PORT "), let port = Int(line.dropFirst(5)) else {
            process.terminate()
            throw SetupFailure(message: "unexpected output from the server process: \(text)")
        }
        return ServerProcess(process: process, input: input, port: port)
    }

    func stop() {
        try? input.fileHandleForWriting.close()
        process.waitUntilExit()
    }

    /// The server process's whole life: called instead of registering benchmarks when the role
    /// variable is set.
    static func runAsServer() -> Never {
        let server = NightrideServer(configuration: .benchmark, logger: .quiet)
        let started = DispatchSemaphore(value: 0)
        let port = Mutex<Int?>(nil)
        Task {
            let bound = try? await server.start()
            port.withLock { $0 = bound }
            started.signal()
        }
        started.wait()
        guard let bound = port.withLock({ $0 }) else {
            FileHandle.standardError.write(Data("the Nightride server did not start\n".utf8))
            exit(1)
        }
        FileHandle.standardOutput.write(Data("PORT \(bound)\n".utf8))
        while readLine() != nil {}
        exit(0)
    }
}

extension NightrideServer.Configuration {
    /// Loopback, a free port, no faults, and no inactivity timeout, so that nobody's driver mode
    /// switches off by itself during a run.
    static var benchmark: Self {
        // The riders sign up by the thousand: bcrypt's cheapest cost keeps that out of the way.
        Self(inactivityTimeout: nil, faults: nil, passwordCost: 4)
    }
}

extension Logger {
    static var quiet: Logger {
        Logger(label: "nightride.benchmark", factory: { _ in SwiftLogNoOpLogHandler() })
    }
}
