import Benchmark
import BenchmarkSupport
import Foundation
import Hummingbird
import HummingbirdWebSocket
import Logging
import StateLoopServer
import StateLoopSync
import StateLoopSyncTransports
import Synchronization

/// A push from a server to a subscriber of `RemoteResource.values()`, through the real
/// transports: Hummingbird writes a WebSocket text frame on 127.0.0.1, `WebSocketPush` reads
/// and decodes it, the resource merges it and hands it to the subscriber task.
func registerSyncLoopbackBenchmarks() {
    let loopback = FixtureBox<LoopbackFixture>()
    Benchmark(
        "Sync: push latency over loopback WebSocket",
        configuration: .init(
            metrics: [.wallClock, .mallocCountTotal],
            warmupIterations: 20,
            scalingFactor: .one,
            maxDuration: .seconds(10),
            maxIterations: 1_000
        ),
        closure: { _, fixture in
            await fixture.pushAndWait()
        },
        setup: { try await loopback.set(LoopbackFixture.make()) },
        teardown: { await loopback.take()?.stop() }
    )
}

/// The server side: one versioned `Int`, served at `GET /value` and pushed to every socket
/// connected to `/push`.
actor PushBackend {
    private(set) var version: UInt64 = 1
    private var sockets: [Int: WebSocketOutboundWriter] = [:]
    private var hangUps: [Int: CheckedContinuation<Void, Never>] = [:]
    private var lastSocket = 0

    var payload: String {
        #"{"version":{"epoch":0,"counter":\#(version)},"value":\#(version)}"#
    }

    var connectionCount: Int { sockets.count }

    /// Moves to `newVersion` and writes it to every socket.
    func push(_ newVersion: UInt64) async {
        version = newVersion
        let text = payload
        for socket in sockets.values {
            try? await socket.write(.text(text))
        }
    }

    /// Keeps a socket open until ``hangUpAll()``.
    func serve(_ outbound: WebSocketOutboundWriter) async {
        lastSocket += 1
        let id = lastSocket
        sockets[id] = outbound
        await withCheckedContinuation { hangUps[id] = $0 }
    }

    func hangUpAll() {
        for continuation in hangUps.values { continuation.resume() }
        hangUps = [:]
        sockets = [:]
    }
}

final class LoopbackFixture: Sendable {
    private let backend: PushBackend
    private let host: SyncHost
    private let resource: RemoteResource<Int>
    private let subscriber: Task<Void, Never>
    /// The newest version the subscriber has seen; -1 before the first.
    private let newest: SharedCount
    /// The next version to push: the pull brought version 1.
    private let next = Mutex<UInt64>(2)

    private init(backend: PushBackend, host: SyncHost, port: Int) {
        self.backend = backend
        self.host = host
        resource = RemoteResource(
            sources: ResourceSources(
                pull: HTTPPull<Int>(url: URL(string: "http://127.0.0.1:\(port)/value")!),
                push: WebSocketPush<Int>(url: "ws://127.0.0.1:\(port)/push")
            ),
            policy: .benchmark
        )
        let newest = SharedCount(initial: -1)
        self.newest = newest
        let values = resource.values()
        subscriber = Task {
            for await value in values {
                newest.advance(to: Int(value.version.counter))
            }
        }
    }

    static func make() async throws -> LoopbackFixture {
        let backend = PushBackend()
        let router = Router()
        router.get("value") { _, _ -> Response in
            Response(
                status: .ok,
                headers: [.contentType: "application/json"],
                body: .init(byteBuffer: ByteBuffer(string: await backend.payload))
            )
        }
        let sockets = Router(context: BasicWebSocketRequestContext.self)
        sockets.ws("push") { _, _ in
            .upgrade()
        } onUpgrade: { _, outbound, _ in
            await backend.serve(outbound)
        }
        var logger = Logger(label: "loopback")
        logger.logLevel = .critical
        let app = Application(
            router: router,
            server: .http1WebSocketUpgrade(webSocketRouter: sockets),
            configuration: .init(address: .hostname("127.0.0.1", port: 0)),
            logger: logger
        )
        // Stopped gracefully, never cancelled: cancelling while a connection is being accepted
        // traps in NIO (apple/swift-nio#3481).
        let host = SyncHost(logger: logger) { _ in .init(app) }
        let port = try await host.start()
        do {
            let fixture = LoopbackFixture(backend: backend, host: host, port: port)
            // The HTTP pull brings version 1; pushes need the socket to be open.
            try await fixture.newest.wait(untilCount: 1, orFailAfter: .seconds(10), "the first pull never arrived")
            let deadline = ContinuousClock.now + .seconds(10)
            while await backend.connectionCount == 0 {
                guard ContinuousClock.now < deadline else {
                    throw SetupFailure(message: "the WebSocket never connected")
                }
                try await Task.sleep(for: .milliseconds(1))
            }
            return fixture
        } catch {
            await host.stop()
            throw error
        }
    }

    /// The server pushes the next version; returns once the subscriber has it.
    func pushAndWait() async {
        let version = next.withLock { next in
            defer { next += 1 }
            return next
        }
        newest.expect(Int(version))
        await backend.push(version)
        await newest.wait()
    }

    func stop() async {
        subscriber.cancel()
        await backend.hangUpAll()
        await host.stop()
    }
}
