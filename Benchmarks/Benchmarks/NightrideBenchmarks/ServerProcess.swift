import BenchmarkSupport
import Foundation
import Logging
import NightrideServer
import Synchronization

/// A Nightride server in a process of its own, so that its resident memory can be read without
/// the clients': this benchmark executable, started again with ``ServerProcess/roleVariable``
/// set. It prints `PORT <n>` once listening, runs the commands it reads on its standard input
/// (see ``command(_:)``), and exits when that input closes (when the benchmark ends it, or dies).
final class ServerProcess: Sendable {
    static let roleVariable = "NIGHTRIDE_BENCHMARK_SERVER"

    private let process: Process
    private let input: Pipe
    private let output: Pipe
    let port: Int

    private init(process: Process, input: Pipe, output: Pipe, port: Int) {
        self.process = process
        self.input = input
        self.output = output
        self.port = port
    }

    var url: URL {
        URL(string: "http://127.0.0.1:\(port)")!
    }

    /// The server process's id, for a profiler to attach to.
    var processIdentifier: Int32 {
        process.processIdentifier
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
        let line = try line(from: output, what: "listening")
        guard line.hasPrefix("PORT "), let port = Int(line.dropFirst(5)) else {
            process.terminate()
            throw SetupFailure(message: "unexpected output from the server process: \(line)")
        }
        return ServerProcess(process: process, input: input, output: output, port: port)
    }

    /// Runs one command in the server process and returns its one-line answer:
    /// `flip on|off COUNT` sets the driver mode of the users `rider-0000` up to COUNT in one
    /// server-side change (one transaction, a push on each of their sockets), and answers
    /// `done MICROSECONDS`: how long the change took before its pushes were queued.
    func command(_ line: String) throws -> String {
        try input.fileHandleForWriting.write(contentsOf: Data((line + "\n").utf8))
        return try Self.line(from: output, what: "answering \(line)")
    }

    /// One line of the server's output, read byte by byte so that nothing after it is taken.
    private static func line(from output: Pipe, what: String) throws -> String {
        var bytes: [UInt8] = []
        while true {
            guard let data = try output.fileHandleForReading.read(upToCount: 1), let byte = data.first else {
                throw SetupFailure(message: "the server process ended before \(what): \(String(decoding: bytes, as: UTF8.self))")
            }
            if byte == UInt8(ascii: "\n") { return String(decoding: bytes, as: UTF8.self) }
            bytes.append(byte)
        }
    }

    func stop() {
        try? input.fileHandleForWriting.close()
        process.waitUntilExit()
    }

    /// The server process's whole life: called instead of registering benchmarks when the role
    /// variable is set.
    static func runAsServer() -> Never {
        raiseFileDescriptorLimit()
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
        while let line = readLine() {
            FileHandle.standardOutput.write(Data((run(line, on: server) + "\n").utf8))
        }
        exit(0)
    }

    private static let riderNames = Mutex<[String]>([])

    /// Runs one command of ``command(_:)`` and returns its answer.
    private static func run(_ line: String, on server: NightrideServer) -> String {
        let words = line.split(separator: " ")
        guard words.count == 3, words[0] == "flip", let count = Int(words[2]) else { return "unknown command: \(line)" }
        // Named once per count, so that later rounds time the change alone.
        let users = riderNames.withLock { names in
            if names.count != count { names = riders(count) }
            return names
        }
        let answer = Mutex("done")
        let finished = DispatchSemaphore(value: 0)
        Task {
            do {
                let start = ContinuousClock.now
                try await server.setDriverModes(words[1] == "on", for: users)
                answer.withLock { $0 = "done \(start.duration(to: .now).microseconds)" }
            } catch {
                answer.withLock { $0 = "failed: \(error)" }
            }
            finished.signal()
        }
        finished.wait()
        return answer.withLock { $0 }
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
