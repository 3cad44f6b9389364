import Foundation
import NightrideHarness
import Synchronization

#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// A chaos run's server in a process of its own (`nightride server --control`): a restart is a
/// SIGKILL and a new process on the same port and data file, so what survives it is exactly
/// what the file holds. Commands go to its standard input, answers come back on its standard
/// output; the truth is read from the file it writes (``NightrideHarness/TruthReader``).
@MainActor
final class ProcessChaosServer: ChaosServer {
    private let executable: URL
    private let dataPath: String
    private let seed: UInt64
    private var child: Child
    private let reader: TruthReader
    private let origin = TruthReader.wallClockNow
    private(set) var url: URL

    /// Starts `executable` (the `nightride` binary) as a server on `dataPath`.
    init(executable: URL, dataPath: String, seed: UInt64) async throws {
        self.executable = executable
        self.dataPath = dataPath
        self.seed = seed
        let (child, port) = try await Child.launch(executable, Self.arguments(dataPath: dataPath, seed: seed, port: 0, newEpoch: false))
        self.child = child
        url = URL(string: "http://127.0.0.1:\(port)")!
        reader = try TruthReader(dataPath: dataPath, origin: origin)
    }

    var now: Duration { TruthReader.wallClockNow - origin }

    func control(_ command: String) async -> String {
        await child.send(command)
    }

    func truth() async throws -> ServerTruth {
        try await reader.truth()
    }

    /// SIGKILL, then a new process on the same port and file: no graceful anything.
    func restart(newEpoch: Bool, down: Duration) async throws {
        await child.kill()
        if down > .zero { try await Task.sleep(for: down) }
        let port = url.port ?? 0
        var attempt = 0
        while true {
            do {
                (child, _) = try await Child.launch(executable, Self.arguments(dataPath: dataPath, seed: seed, port: port, newEpoch: newEpoch))
                return
            } catch  where attempt < 40 {
                // The port may take a moment to be free again.
                attempt += 1
                try await Task.sleep(for: .milliseconds(50))
            }
        }
    }

    func stop() async {
        await child.kill()
    }

    private static func arguments(dataPath: String, seed: UInt64, port: Int, newEpoch: Bool) -> [String] {
        [
            "server", "--data", dataPath, "--port", "\(port)", "--control", "--faults", "\(seed)", "--fault-plan", "chaos",
            "--inactivity", "3", "--password-cost", "4", "--scripted-clients",
        ] + (newEpoch ? ["--new-epoch"] : [])
    }

    /// One server process: its pipes, the lines it writes, and the answers awaited in order.
    @MainActor
    final class Child {
        private let process: Process
        private let input: FileHandle
        private var lines: AsyncStream<String>.Iterator
        private var busy = false
        private var waiting: [CheckedContinuation<Void, Never>] = []

        private init(process: Process, input: FileHandle, lines: AsyncStream<String>) {
            self.process = process
            self.input = input
            self.lines = lines.makeAsyncIterator()
        }

        /// Starts the process; returns it once it says where it listens, with the port.
        static func launch(_ executable: URL, _ arguments: [String]) async throws -> (Child, Int) {
            let process = Process()
            process.executableURL = executable
            process.arguments = arguments
            let stdin = Pipe()
            let stdout = Pipe()
            process.standardInput = stdin
            process.standardOutput = stdout
            process.standardError = FileHandle.nullDevice
            try process.run()
            let child = Child(process: process, input: stdin.fileHandleForWriting, lines: Self.lines(of: stdout.fileHandleForReading))
            while let line = await child.nextLine() {
                if let range = line.range(of: "listening on http://127.0.0.1:"), let port = Int(line[range.upperBound...].prefix { $0.isNumber }) {
                    return (child, port)
                }
            }
            await child.kill()
            throw LaunchFailure(description: "the server process ended before listening (\(arguments.joined(separator: " ")))")
        }

        /// Sends one command; returns its answer line. One command at a time: answers come in
        /// the order of commands, and a line must have one reader.
        func send(_ command: String) async -> String {
            while busy {
                await withCheckedContinuation { waiting.append($0) }
            }
            busy = true
            defer {
                busy = false
                if !waiting.isEmpty { waiting.removeFirst().resume() }
            }
            input.write(Data((command + "\n").utf8))
            return await nextLine() ?? "error: the server process ended"
        }

        private func nextLine() async -> String? {
            var iterator = lines
            let line = await iterator.next(isolation: #isolation)
            lines = iterator
            return line
        }

        /// SIGKILL, then waits (on a thread of its own) for the process to be reaped.
        func kill() async {
            guard process.isRunning else { return }
            #if canImport(Glibc)
                Glibc.kill(process.processIdentifier, SIGKILL)
            #else
                Darwin.kill(process.processIdentifier, SIGKILL)
            #endif
            let process = self.process
            await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
                Thread.detachNewThread {
                    process.waitUntilExit()
                    continuation.resume()
                }
            }
        }

        /// The lines `handle` delivers, read on a thread of its own (a blocking read must not
        /// hold the cooperative pool).
        private static func lines(of handle: FileHandle) -> AsyncStream<String> {
            let (stream, continuation) = AsyncStream.makeStream(of: String.self)
            Thread.detachNewThread {
                var buffer: [UInt8] = []
                while true {
                    let chunk = handle.availableData
                    if chunk.isEmpty { break }
                    buffer += chunk
                    while let newline = buffer.firstIndex(of: UInt8(ascii: "\n")) {
                        continuation.yield(String(decoding: buffer[..<newline], as: UTF8.self))
                        buffer.removeSubrange(...newline)
                    }
                }
                continuation.finish()
            }
            return stream
        }
    }

    struct LaunchFailure: Error, CustomStringConvertible {
        let description: String
    }
}
