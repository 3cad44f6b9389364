import Foundation
import StateLoopServerTesting
import StateLoopSyncTransports
import Synchronization
import Testing

/// `ServerProcess`: a crash loses what the process was answering and ends its sockets, nothing
/// reaches it while it is down, and a restart starts a new instance.
@Suite struct ServerProcessTests {
    private let request = TransportRequest(method: "POST", url: URL(string: "http://app.test/me/notes")!)

    @Test func whileDownNothingReachesIt() async throws {
        let made = Mutex<[InstanceTransport]>([])
        let process = try await ServerProcess {
            let instance = InstanceTransport()
            made.withLock { $0.append(instance) }
            return instance
        }
        #expect(process.isRunning && process.instances == 1)
        #expect(try await process.send(request, limit: 100).status == 200)
        process.crash()
        #expect(!process.isRunning)
        await #expect(throws: LostOnTheWay(leg: .request)) { try await process.send(request, limit: 100) }
        #expect(await process.openPush(request, deadline: .seconds(1), maximumMessageBytes: 100, opened: {}, message: { _ in }) == .unreachable)
        #expect(made.withLock { $0[0].requests } == 1, "nothing reached the crashed instance")
        try await process.restart()
        #expect(process.isRunning && process.instances == 2)
        #expect(try await process.send(request, limit: 100).status == 200)
        #expect(made.withLock { $0.map(\.requests) } == [1, 1], "a new instance answered")
    }

    @Test func aCrashLosesTheAnswerItWasGiving() async throws {
        let instance = InstanceTransport(holdsAnswers: true)
        let process = try await ServerProcess { instance }
        let request = request
        let answer = Task { try await process.send(request, limit: 100) }
        await instance.waitForRequest()
        try await process.restart()
        instance.release()
        await #expect(throws: LostOnTheWay(leg: .answer)) { try await answer.value }
        #expect(instance.requests == 1, "the instance acted on the request whose answer was lost")
    }

    @Test func aCrashEndsItsSocketsAsFailed() async throws {
        let instance = InstanceTransport()
        let process = try await ServerProcess { instance }
        let opened = AsyncStream.makeStream(of: Void.self)
        async let attempt = process.openPush(
            request, deadline: .seconds(1), maximumMessageBytes: 100, opened: { opened.continuation.yield() }, message: { _ in })
        for await _ in opened.stream { break }
        process.crash()
        #expect(await attempt == .ended(failed: true), "the app sees its connection fail, and connects again")
        #expect(instance.socketsCancelled == 1, "the instance's socket was closed")
    }
}

/// One instance of a server: answers 200 (once let go, when it holds its answers), and keeps
/// each socket open until its task is cancelled.
private final class InstanceTransport: SyncTransport {
    private let counts = Mutex((requests: 0, socketsCancelled: 0))
    private let holdsAnswers: Bool
    private let arrived = AsyncStream.makeStream(of: Void.self)
    private let letGo = AsyncStream.makeStream(of: Void.self)

    init(holdsAnswers: Bool = false) {
        self.holdsAnswers = holdsAnswers
    }

    var requests: Int { counts.withLock { $0.requests } }
    var socketsCancelled: Int { counts.withLock { $0.socketsCancelled } }

    func waitForRequest() async {
        for await _ in arrived.stream { return }
    }

    func release() {
        letGo.continuation.yield()
    }

    func send(_ request: TransportRequest, limit: Int) async throws -> TransportResponse {
        counts.withLock { $0.requests += 1 }
        if holdsAnswers {
            arrived.continuation.yield()
            for await _ in letGo.stream { break }
        }
        return TransportResponse(status: 200)
    }

    func openPush(
        _ request: TransportRequest, deadline: Duration, maximumMessageBytes: Int, opened: @escaping @Sendable () async -> Void,
        message: @escaping @Sendable (Result<String, PushDecodingError>) async -> Void
    ) async -> PushAttempt {
        await opened()
        // Open until the task is cancelled: an AsyncStream's iteration ends then.
        let open = AsyncStream.makeStream(of: Void.self)
        for await _ in open.stream {}
        open.continuation.finish()
        counts.withLock { $0.socketsCancelled += 1 }
        return .ended(failed: false)
    }
}

/// `LoadBalancer`: each request goes to the running instance it picks, never to one that is
/// down; with none running, nothing is reached.
@Suite struct LoadBalancerTests {
    private let request = TransportRequest(method: "GET", url: URL(string: "http://app.test/me/notes")!)

    @Test func requestsGoToTheRunningInstancePicked() async throws {
        let made = Mutex<[InstanceTransport]>([])
        let processes = try await [0, 1, 2].asyncMap { _ in
            try await ServerProcess {
                let instance = InstanceTransport()
                made.withLock { $0.append(instance) }
                return instance
            }
        }
        let pick = Mutex(0)
        let balancer = LoadBalancer(processes) { count in pick.withLock { $0 } % count }
        _ = try await balancer.send(request, limit: 100)
        pick.withLock { $0 = 2 }
        _ = try await balancer.send(request, limit: 100)
        #expect(made.withLock { $0.map(\.requests) } == [1, 0, 1])
        // The third is down: the second of those running is now the second instance.
        processes[2].crash()
        _ = try await balancer.send(request, limit: 100)
        pick.withLock { $0 = 1 }
        _ = try await balancer.send(request, limit: 100)
        #expect(made.withLock { $0.map(\.requests) } == [2, 1, 1], "nothing reached the instance that is down")
        for process in processes { process.crash() }
        await #expect(throws: LostOnTheWay(leg: .request)) { try await balancer.send(request, limit: 100) }
        #expect(await balancer.openPush(request, deadline: .seconds(1), maximumMessageBytes: 100, opened: {}, message: { _ in }) == .unreachable)
    }
}

extension Array where Element: Sendable {
    /// The elements mapped one after another by an async `transform`.
    fileprivate func asyncMap<T>(_ transform: (Element) async throws -> T) async rethrows -> [T] {
        var mapped: [T] = []
        for element in self { mapped.append(try await transform(element)) }
        return mapped
    }
}
