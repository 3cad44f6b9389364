import Foundation
import Logging
import StateLoopServer
import Synchronization
import TasksModel
import TasksServer
import Testing

#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// The terminal host as a user meets it: `tasks client` started on a pseudo-terminal, against a
/// real server. It takes the terminal over, draws the board, reads keys, and gives the terminal
/// back as it found it (settings and screen) however it ends: the user's quit, or SIGTERM.
@Suite("Tasks terminal: the host on a pseudo-terminal", .serialized, .timeLimit(.minutes(6)))
struct TerminalHostTests {
    /// The escape sequence that enters the alternate screen, and the one that leaves it.
    private static let enter = "\u{1B}[?1049h"
    private static let leave = "\u{1B}[?1049l"

    @Test(
        "the client takes the terminal over, draws the board, sends what the keys make, and gives the terminal back as found, on Ctrl-C and on SIGTERM"
    )
    func takesOverAndGivesBack() async throws {
        var logger = Logger(label: "tasks.test")
        logger.logLevel = .critical
        let server = TasksServer(store: try SQLiteStore(), logger: logger)
        try await server.add("ann", to: "p1", named: "Launch")
        let host = SyncHost(logger: logger) { port in .init(server.sync, application: server.application(port: port)) }
        let address = "http://127.0.0.1:\(try await host.start())"
        defer { Task { await host.stop() } }

        for ending in ["Ctrl-C", "SIGTERM"] {
            let terminal = try PseudoTerminal()
            defer { terminal.close() }
            let found = try terminal.settings()
            let client = try Self.client(["client", "--server", address, "--name", "ann"], on: terminal)
            defer { if client.isRunning { client.terminate() } }

            try await Self.eventually("\(ending): the board drawn on the alternate screen", else: { terminal.text }) {
                let text = terminal.text
                return text.contains(Self.enter) && text.contains("[Launch]") && text.contains("sync: live")
            }
            #expect(try terminal.settings() != found, "\(ending): the terminal was not switched to raw mode")
            // Keys through the terminal reach the board: a task added.
            let title = "typed on a tty \(ending)"
            terminal.type("a" + title + "\r")
            try await Self.eventually("\(ending): the server has the typed task") {
                try await server.sync.read { try $0.rows(of: TasksCollections.tasks, matching: RowQuery(where: [])) }.contains { $0.title == title }
            }

            if ending == "Ctrl-C" { terminal.type("\u{03}") } else { client.terminate() }
            try await Self.eventually("\(ending): the client exited") { !client.isRunning }
            #expect(
                client.terminationReason == .exit && client.terminationStatus == 0,
                "\(ending): \(client.terminationReason) \(client.terminationStatus)")
            #expect(try terminal.settings() == found, "\(ending): the terminal's settings were not given back")
            let text = terminal.text
            let entered = try #require(text.range(of: Self.enter), "\(ending): never entered the alternate screen")
            let left = text.range(of: Self.leave, options: .backwards)
            #expect(left.map { $0.lowerBound > entered.upperBound } == true, "\(ending): the alternate screen was not left")
        }
    }

    @Test("without a terminal the client says so and fails, before it signs in")
    func noTerminal() async throws {
        let process = Process()
        process.executableURL = try Self.tasks()
        process.arguments = ["client", "--server", "http://127.0.0.1:9", "--name", "ann"]
        let errors = Pipe()
        process.standardInput = Pipe()
        process.standardOutput = Pipe()
        process.standardError = errors
        try process.run()
        try await Self.eventually("the client exited") { !process.isRunning }
        let said = String(decoding: errors.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
        #expect(process.terminationStatus != 0)
        #expect(said.hasPrefix("tasks client: "), "\(said)")
        #expect(!said.contains("sign in"), "it tried to sign in: \(said)")
    }

    /// `tasks` with `arguments`, its standard input, output and error on `terminal`.
    private static func client(_ arguments: [String], on terminal: PseudoTerminal) throws -> Process {
        let process = Process()
        process.executableURL = try tasks()
        process.arguments = arguments
        let handle = FileHandle(fileDescriptor: terminal.follower, closeOnDealloc: false)
        process.standardInput = handle
        process.standardOutput = handle
        process.standardError = handle
        try process.run()
        return process
    }

    /// The `tasks` executable, built beside the test bundle.
    private static func tasks() throws -> URL {
        let folders = [Bundle.main.bundleURL.deletingLastPathComponent(), URL(fileURLWithPath: CommandLine.arguments[0]).deletingLastPathComponent()]
        for folder in folders {
            for candidate in [folder, folder.deletingLastPathComponent()] {
                let url = candidate.appendingPathComponent("tasks")
                if FileManager.default.isExecutableFile(atPath: url.path) { return url }
            }
        }
        throw TestFailure("no tasks executable beside the tests in \(folders.map(\.path))")
    }

    /// Waits, at most `limit`, until `condition` holds; fails the test with `what` otherwise.
    private static func eventually(
        _ what: String, within limit: Duration = .seconds(60), else seen: () -> String = { "" }, _ condition: () async throws -> Bool
    ) async throws {
        let deadline = ContinuousClock.now + limit
        while ContinuousClock.now < deadline {
            if try await condition() { return }
            try await Task.sleep(for: .milliseconds(20))
        }
        throw TestFailure("waited \(limit) in vain: \(what)\(seen().isEmpty ? "" : "; the terminal shows: \(seen().debugDescription)")")
    }
}

/// A test's failure, said.
private struct TestFailure: Error, CustomStringConvertible {
    let description: String

    init(_ description: String) {
        self.description = description
    }
}

/// A pseudo-terminal: the test holds the leader side (what a terminal emulator holds), the
/// client gets the follower as its terminal. Everything the client writes is kept.
private final class PseudoTerminal: Sendable {
    let leader: Int32
    let follower: Int32
    private let written = Mutex<[UInt8]>([])
    private let stopped = Atomic<Bool>(false)
    /// Signalled as the reader ends: the descriptors are closed only then, since a number
    /// closed under a reader that still polls it may already name the next test's terminal.
    private let ended = DispatchSemaphore(value: 0)

    init() throws {
        let (leader, name) = try Self.openLeader()
        let follower = open(name, O_RDWR | O_NOCTTY)
        guard follower >= 0 else { throw TestFailure("cannot open \(name): errno \(errno)") }
        self.leader = leader
        self.follower = follower
        // Read apart, so that the client never blocks on a full terminal.
        Thread { [self] in
            defer { ended.signal() }
            var buffer = [UInt8](repeating: 0, count: 4096)
            while !self.stopped.load(ordering: .acquiring) {
                var ready = pollfd(fd: leader, events: Int16(POLLIN), revents: 0)
                guard poll(&ready, 1, 50) > 0 else { continue }
                let count = read(leader, &buffer, buffer.count)
                if count > 0 {
                    self.written.withLock { $0 += buffer[0..<count] }
                } else if count < 0, errno != EINTR, errno != EAGAIN {
                    return
                }
            }
        }
        .start()
    }

    /// A new pseudo-terminal's leader, unlocked, and its follower's path. On Linux through
    /// `/dev/ptmx` and its ioctls (Swift's Glibc module leaves `posix_openpt` out).
    private static func openLeader() throws -> (Int32, String) {
        #if canImport(Glibc)
            let leader = Glibc.open("/dev/ptmx", O_RDWR | O_NOCTTY)
            guard leader >= 0 else { throw TestFailure("cannot open /dev/ptmx: errno \(errno)") }
            // TIOCSPTLCK and TIOCGPTN, macros Swift does not import: their values on Linux.
            var unlock: Int32 = 0
            var number: UInt32 = 0
            guard ioctl(leader, UInt(0x4004_5431), &unlock) == 0, ioctl(leader, UInt(0x8004_5430), &number) == 0 else {
                throw TestFailure("cannot unlock the pseudo-terminal: errno \(errno)")
            }
            return (leader, "/dev/pts/\(number)")
        #else
            let leader = posix_openpt(O_RDWR | O_NOCTTY)
            guard leader >= 0, grantpt(leader) == 0, unlockpt(leader) == 0, let name = ptsname(leader) else {
                throw TestFailure("no pseudo-terminal: errno \(errno)")
            }
            return (leader, String(cString: name))
        #endif
    }

    /// Everything written to the terminal so far.
    var text: String {
        String(decoding: written.withLock { $0 }, as: UTF8.self)
    }

    /// Types `keys`, as a user at the terminal would.
    func type(_ keys: String) {
        let bytes = Array(keys.utf8)
        _ = bytes.withUnsafeBytes { write(leader, $0.baseAddress, $0.count) }
    }

    /// The terminal's settings now: the input, output and local modes.
    func settings() throws -> [UInt] {
        var settings = termios()
        guard tcgetattr(follower, &settings) == 0 else { throw TestFailure("tcgetattr: errno \(errno)") }
        return [UInt(settings.c_iflag), UInt(settings.c_oflag), UInt(settings.c_lflag), UInt(settings.c_cflag)]
    }

    func close() {
        stopped.store(true, ordering: .releasing)
        ended.wait()
        for descriptor in [follower, leader] {
            #if canImport(Glibc)
                _ = Glibc.close(descriptor)
            #else
                _ = Darwin.close(descriptor)
            #endif
        }
    }
}
