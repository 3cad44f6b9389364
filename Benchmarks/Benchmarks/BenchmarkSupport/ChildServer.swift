import Foundation
import Synchronization

/// A server in a process of its own, so that its resident memory and its CPU are its own: the
/// benchmark executable started again with a role variable set. The child prints `PORT <n>`
/// once listening, answers each line it reads on its standard input with one line (see
/// ``command(_:)``), and exits when that input closes: when the benchmark ends it, or dies.
public final class ChildServer: Sendable {
    private let process: Process
    private let input: Pipe
    private let output: Pipe
    /// The port the child listens on, on loopback.
    public let port: Int

    private init(process: Process, input: Pipe, output: Pipe, port: Int) {
        self.process = process
        self.input = input
        self.output = output
        self.port = port
    }

    /// Starts this executable again with `variable` set in its environment (and `extra`), and
    /// returns once it listens.
    public static func launch(role variable: String, environment extra: [String: String] = [:]) throws -> ChildServer {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: try FileManager.default.destinationOfSymbolicLink(atPath: "/proc/self/exe"))
        process.arguments = []
        var environment = ProcessInfo.processInfo.environment.merging(extra) { _, new in new }
        environment[variable] = "1"
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
        return ChildServer(process: process, input: input, output: output, port: port)
    }

    /// `http://127.0.0.1:<port>`.
    public var url: URL {
        URL(string: "http://127.0.0.1:\(port)")!
    }

    /// The child's process id, for a profiler to attach to.
    public var processIdentifier: Int32 {
        process.processIdentifier
    }

    /// The child's resident memory now.
    public var residentBytes: Int {
        BenchmarkSupport.residentBytes(of: "\(process.processIdentifier)")
    }

    /// Sends one command line to the child and returns its one-line answer.
    public func command(_ line: String) throws -> String {
        try input.fileHandleForWriting.write(contentsOf: Data((line + "\n").utf8))
        return try Self.line(from: output, what: "answering \(line)")
    }

    /// ``command(_:)`` on a thread of its own, so that the wait for the answer does not hold a
    /// thread of the cooperative pool.
    public func commandOffPool(_ line: String) async throws -> String {
        try await withCheckedThrowingContinuation { continuation in
            Thread.detachNewThread {
                continuation.resume(with: Result { try self.command(line) })
            }
        }
    }

    /// Closes the child's input and waits for it to exit.
    public func stop() {
        try? input.fileHandleForWriting.close()
        process.waitUntilExit()
    }

    /// The child's whole life, once its server listens on `port`: tells the parent, answers each
    /// command with `handle`, and exits when the parent closes its input.
    public static func serve(port: Int, handle: (String) -> String) -> Never {
        FileHandle.standardOutput.write(Data("PORT \(port)\n".utf8))
        while let line = readLine() {
            FileHandle.standardOutput.write(Data((handle(line) + "\n").utf8))
        }
        exit(0)
    }

    /// One line of the child's output, read byte by byte so that nothing after it is taken.
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
}

/// The resident memory of process `pid` (`self` for this one), from `/proc`.
public func residentBytes(of pid: String = "self") -> Int {
    guard let text = try? String(contentsOfFile: "/proc/\(pid)/statm", encoding: .utf8) else { return 0 }
    let fields = text.split(separator: " ")
    guard fields.count > 1, let pages = Int(fields[1]) else { return 0 }
    return pages * sysconf(Int32(_SC_PAGESIZE))
}

/// Runs `body` to its end from synchronous code (a child server's command handler), waiting on
/// this thread.
public func runBlocking<Result: Sendable>(_ body: @escaping @Sendable () async throws -> Result) throws -> Result {
    let outcome = OutcomeBox<Result>()
    let finished = DispatchSemaphore(value: 0)
    Task {
        do {
            outcome.set(.success(try await body()))
        } catch {
            outcome.set(.failure(error))
        }
        finished.signal()
    }
    finished.wait()
    return try outcome.get()
}

private final class OutcomeBox<Result: Sendable>: Sendable {
    private let outcome = Mutex<Swift.Result<Result, any Error>?>(nil)

    func set(_ value: Swift.Result<Result, any Error>) {
        outcome.withLock { $0 = value }
    }

    func get() throws -> Result {
        try outcome.withLock { $0 }!.get()
    }
}
