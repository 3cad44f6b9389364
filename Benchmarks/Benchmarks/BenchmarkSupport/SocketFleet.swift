import Foundation
import NIOCore
import NIOPosix
import Synchronization

/// Thousands of light push sockets (``LightSocket``) on a ``ChildServer``, and the rounds of a
/// fan-out benchmark on them: the server makes one change, every socket gets one frame of it.
///
/// Threading: the sockets are read by one thread, so that the server keeps most of the machine
/// (two readers read faster but slow a busy server down: see docs/Benchmarks.md); a round is run
/// by one task at a time (package-benchmark's iterations are sequential).
public final class SocketFleet: Sendable {
    /// What reads the sockets.
    public enum Reader: Sendable {
        /// Plain system calls on one thread (``RawPushSockets``, Linux only: elsewhere the
        /// sockets are NIO's): the default, the lightest.
        case raw
        /// NIO channels on one event loop (``LightSocket``): how the benchmarks read before
        /// session 14, kept to show what the reader costs.
        case nio
    }

    private enum Sockets: Sendable {
        #if os(Linux)
            case raw(RawPushSockets)
        #endif
        case nio(MultiThreadedEventLoopGroup, [any Channel])
    }

    /// The server the sockets are open on.
    public let server: ChildServer
    /// The server's resident memory per open socket, measured once they were all open.
    public let perSocket: Int
    private let sockets: Sockets
    private let socketCount: Int
    private let tally: FrameTally
    private let rounds = Mutex(0)

    private init(server: ChildServer, perSocket: Int, sockets: Sockets, socketCount: Int, tally: FrameTally) {
        self.server = server
        self.perSocket = perSocket
        self.sockets = sockets
        self.socketCount = socketCount
        self.tally = tally
    }

    /// Opens one socket per `Authorization` header value on `path`, waits until each has its
    /// first frame (the value as it is), and measures the server's memory per socket against
    /// `serverBefore`. Raises this process's open-file limit first. On failure, stops `server`.
    public static func open(
        on server: ChildServer, authorizations: [String], path: String, serverBefore: Int, reader: Reader = .raw
    ) async throws -> SocketFleet {
        let limit = raiseFileDescriptorLimit()
        var sockets: Sockets?
        do {
            guard limit > authorizations.count + 1_000 else {
                throw SetupFailure(message: "this process may open \(limit) files: \(authorizations.count) sockets need more (ulimit -Hn)")
            }
            let tally = FrameTally()
            tally.expect(authorizations.count)
            switch reader {
            #if os(Linux)
                case .raw:
                    sockets = .raw(try await RawPushSockets.open(authorizations: authorizations, port: server.port, path: path, tally: tally))
            #endif
            default:
                let group = MultiThreadedEventLoopGroup(numberOfThreads: 1)
                sockets = .nio(group, [])
                let channels = try await LightSocket.connect(
                    authorizations: authorizations, port: server.port, path: path, tally: tally, group: group)
                sockets = .nio(group, channels)
            }
            _ = try await tally.wait(orFailAfter: .seconds(60))
            // Let the server's side of the last sockets settle before reading its memory.
            try await Task.sleep(for: .milliseconds(500))
            let perSocket = (server.residentBytes - serverBefore) / authorizations.count
            guard let opened = sockets else { throw SetupFailure(message: "no sockets were opened") }
            return SocketFleet(server: server, perSocket: perSocket, sockets: opened, socketCount: authorizations.count, tally: tally)
        } catch {
            server.stop()
            if let sockets { await close(sockets) }
            throw error
        }
    }

    private static func close(_ sockets: Sockets) async {
        switch sockets {
        #if os(Linux)
            case .raw(let raw):
                raw.stop()
        #endif
        case .nio(let group, let channels):
            for channel in channels { channel.close(promise: nil) }
            try? await group.shutdownGracefully()
        }
    }

    /// The payload bytes of every frame the sockets received so far, all sockets together.
    public var payloadBytes: Int { tally.payloadBytes }

    /// One round: sends the server `command(round)` (numbered from 1), whose answer must be
    /// `done MICROSECONDS`, and waits for one frame on every socket. Returns the time from the
    /// command to the last frame, and the server's own microseconds.
    public func round(_ command: (Int) -> String) async throws -> (lastFrame: Duration, server: Int) {
        let round = rounds.withLock { round in
            round += 1
            return round
        }
        tally.expect(socketCount * (round + 1))
        let start = ContinuousClock.now
        let line = command(round)
        let answer = try server.command(line)
        guard answer.hasPrefix("done "), let took = Int(answer.dropFirst(5)) else {
            throw SetupFailure(message: "the server could not run \(line): \(answer)")
        }
        let last = try await tally.wait(orFailAfter: .seconds(30))
        return (start.duration(to: last), took)
    }

    /// Gives a profiler of the server process time to attach (``waitForProfiler(toProfile:)``).
    public func waitForProfiler() async throws {
        try await BenchmarkSupport.waitForProfiler(toProfile: server.processIdentifier)
    }

    /// Closes the sockets, then the server process.
    public func stop() async {
        await Self.close(sockets)
        try? await Task.sleep(for: .milliseconds(500))
        server.stop()
    }
}
