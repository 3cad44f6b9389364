import Foundation

#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// A child process of the tests (a crash child, built beside them), started with pipes; read
/// line by line, killed, reaped.
public final class ChildProcess {
    private let process = Process()
    private let stdout = Pipe()
    private let stderr = Pipe()
    private var buffer: [UInt8] = []

    /// Starts the product `product` (built beside the tests) with `arguments`, and `environment`
    /// on top of this process's, less the variables `removing` names.
    public init(_ product: String, _ arguments: [String], environment: [String: String] = [:], removing: [String] = []) throws {
        process.executableURL = try builtProduct(named: product)
        process.arguments = arguments
        if !environment.isEmpty || !removing.isEmpty {
            var merged = ProcessInfo.processInfo.environment.merging(environment) { _, given in given }
            for name in removing where environment[name] == nil { merged[name] = nil }
            process.environment = merged
        }
        process.standardOutput = stdout
        process.standardError = stderr
        try process.run()
    }

    /// The next line, blocking until it is written; `nil` at the end of the output.
    public func readLine() -> String? {
        while true {
            if let newline = buffer.firstIndex(of: UInt8(ascii: "\n")) {
                let line = String(decoding: buffer[..<newline], as: UTF8.self)
                buffer.removeSubrange(...newline)
                return line
            }
            var chunk = [UInt8](repeating: 0, count: 4_096)
            let count = chunk.withUnsafeMutableBytes {
                read(stdout.fileHandleForReading.fileDescriptor, $0.baseAddress, $0.count)
            }
            guard count > 0 else { return nil }
            buffer.append(contentsOf: chunk[..<count])
        }
    }

    /// The next line, read on a thread of its own within `limit` (times ``hangGuardScale``);
    /// `nil` at the end of the output, or past the limit, when the child is killed so that the
    /// read ends.
    public func readLine(within limit: Duration) async -> String? {
        nonisolated(unsafe) let child = self
        let timer = Task {
            try await Task.sleep(for: limit * hangGuardScale)
            child.sendKill()
        }
        defer { timer.cancel() }
        return await withCheckedContinuation { continuation in
            Thread.detachNewThread { continuation.resume(returning: child.readLine()) }
        }
    }

    /// How the process ended, and what it wrote that was not read.
    public struct Ended: Sendable {
        public var status: Int32
        public var signal: Int32?
        public var stdout: String
        public var stderr: String
    }

    /// SIGKILL, then what was left in the pipes.
    public func kill() -> Ended {
        sendKill()
        return wait()
    }

    /// SIGKILL, without waiting: for a hang guard beside a caller that waits for the end.
    public func sendKill() {
        #if canImport(Glibc)
            Glibc.kill(process.processIdentifier, SIGKILL)
        #else
            Darwin.kill(process.processIdentifier, SIGKILL)
        #endif
    }

    /// `wait()` on a thread of its own: a test awaiting a child for seconds must not hold one
    /// of the few threads Swift concurrency has (as many as cores), which the rest of the
    /// suite's tests need meanwhile.
    public func ended() async -> Ended {
        // The caller awaits until the thread is done with it: one user at a time.
        nonisolated(unsafe) let child = self
        return await withCheckedContinuation { continuation in
            Thread.detachNewThread {
                let ended = child.wait()
                continuation.resume(returning: ended)
            }
        }
    }

    /// The end, killed past `limit` (times ``hangGuardScale``): a hang guard far beyond what
    /// the child takes.
    public func ended(within limit: Duration) async -> Ended {
        nonisolated(unsafe) let child = self
        let guardTask = Task {
            try await Task.sleep(for: limit * hangGuardScale)
            child.sendKill()
        }
        defer { guardTask.cancel() }
        return await ended()
    }

    /// Waits for the end, then reads what was left in the pipes: both at once, since a child
    /// whose standard error fills its pipe (64 KiB) stops until someone reads it.
    public func wait() -> Ended {
        let errorsRead = DispatchSemaphore(value: 0)
        nonisolated(unsafe) var errors = Data()
        let errorPipe = self.stderr
        Thread.detachNewThread {
            errors = errorPipe.fileHandleForReading.readDataToEndOfFile()
            errorsRead.signal()
        }
        let rest = stdout.fileHandleForReading.readDataToEndOfFile()
        errorsRead.wait()
        process.waitUntilExit()
        let killed = process.terminationReason == .uncaughtSignal
        return Ended(
            status: process.terminationStatus,
            signal: killed ? process.terminationStatus : nil,
            stdout: String(decoding: buffer, as: UTF8.self) + String(decoding: rest, as: UTF8.self),
            stderr: String(decoding: errors, as: UTF8.self)
        )
    }
}
