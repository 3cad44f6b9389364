import Foundation
import Hummingbird
import HummingbirdWebSocket
import Logging
import StateLoopSync
import StateLoopSyncTransports
import Synchronization
import Testing

/// A tiny versioned backend: one string value, served over HTTP and pushed over WebSocket.
actor LoopbackBackend {
    private(set) var version: UInt64 = 1
    private(set) var value = "one"
    private var sockets: [UUID: WebSocketOutboundWriter] = [:]
    private var disconnects: [UUID: CheckedContinuation<Void, Never>] = [:]
    private var connectionWaiters: [CheckedContinuation<Void, Never>] = []
    var failNextPullWith: (status: HTTPResponse.Status, retryAfter: String?)?

    var payload: String {
        #"{"version":{"epoch":0,"counter":\#(version)},"value":"\#(value)"}"#
    }

    /// Changes the value; pushes it to every socket unless `push` is false.
    func update(_ newValue: String, push: Bool = true) async {
        version += 1
        value = newValue
        guard push else { return }
        for socket in sockets.values {
            try? await socket.write(.text(payload))
        }
    }

    /// Closes every socket, as a network cut would.
    func disconnectAll() {
        for continuation in disconnects.values { continuation.resume() }
        disconnects = [:]
        sockets = [:]
    }

    /// Returns once a client's push socket is connected.
    func waitForConnection() async {
        if !sockets.isEmpty { return }
        await withCheckedContinuation { connectionWaiters.append($0) }
    }

    func serve(outbound: WebSocketOutboundWriter) async {
        let id = UUID()
        sockets[id] = outbound
        for waiter in connectionWaiters { waiter.resume() }
        connectionWaiters = []
        await withCheckedContinuation { continuation in disconnects[id] = continuation }
    }

    func takeFailure() -> (status: HTTPResponse.Status, retryAfter: String?)? {
        defer { failNextPullWith = nil }
        return failNextPullWith
    }

    func failNextPull(status: HTTPResponse.Status, retryAfter: String?) {
        failNextPullWith = (status, retryAfter)
    }
}

/// Runs the backend on a free loopback port for the duration of `body`.
func withLoopbackServer(_ body: (LoopbackBackend, Int) async throws -> Void) async throws {
    let backend = LoopbackBackend()
    let router = Router()
    router.get("value") { _, _ -> Response in
        if let failure = await backend.takeFailure() {
            var headers = HTTPFields()
            if let retryAfter = failure.retryAfter { headers[.retryAfter] = retryAfter }
            return Response(status: failure.status, headers: headers)
        }
        return Response(
            status: .ok,
            headers: [.contentType: "application/json"],
            body: .init(byteBuffer: ByteBuffer(string: await backend.payload))
        )
    }
    let sockets = Router(context: BasicWebSocketRequestContext.self)
    sockets.ws("push") { _, _ in
        .upgrade()
    } onUpgrade: { _, outbound, _ in
        await backend.serve(outbound: outbound)
    }
    // Open push sockets are closed first, so that the graceful shutdown need not wait for them.
    try await withLoopback(router, sockets: sockets) { port in
        do {
            try await body(backend, port)
        } catch {
            await backend.disconnectAll()
            throw error
        }
        await backend.disconnectAll()
    }
}

/// Real sockets on loopback, so this suite waits on the real clock; every wait is bounded.
@Suite("HTTP + WebSocket over loopback", .timeLimit(.minutes(6)))
struct LoopbackTests {
    func makeResource(port: Int) -> RemoteResource<String> {
        var policy = ResourcePolicy()
        policy.pollInterval = nil
        policy.initialBackoff = .milliseconds(50)
        policy.jitter = ResourcePolicy.noJitter
        return RemoteResource(
            sources: ResourceSources(
                pull: HTTPPull<String>(url: URL(string: "http://127.0.0.1:\(port)/value")!),
                push: WebSocketPush<String>(url: "ws://127.0.0.1:\(port)/push", initialBackoff: .milliseconds(50))
            ),
            policy: policy
        )
    }

    @Test("pull over HTTP, pushes over WebSocket, and a reconnection catches up with a pull")
    func pullPushReconnect() async throws {
        try await withLoopbackServer { backend, port in
            let resource = makeResource(port: port)
            var values = resource.values().makeAsyncIterator()
            #expect(await values.next()?.value == "one")

            await backend.waitForConnection()
            await backend.update("two")
            let pushed = await values.next()
            #expect(pushed?.value == "two")
            #expect(pushed?.version == Version(counter: 2))

            // A change that is never pushed, then a network cut: the reconnection's pull brings
            // it. (Made after the cut, it raced the reconnection: a loaded machine let the
            // client reconnect and pull first, and the test waited forever for "three".)
            await backend.update("three", push: false)
            await backend.disconnectAll()
            let caughtUp = await values.next()
            #expect(caughtUp?.value == "three")
            #expect(resource.requestsStarted == 2)
        }
    }

    @Test("an HTTP 429 with Retry-After is retried after the server's wait; a 404 stops")
    func statusCodes() async throws {
        try await withLoopbackServer { backend, port in
            await backend.failNextPull(status: .tooManyRequests, retryAfter: "0.2")
            let resource = makeResource(port: port)
            var updates = resource.updates().makeAsyncIterator()
            var status = await updates.next()
            while status?.value == nil { status = await updates.next() }
            #expect(status?.value?.value == "one")
            #expect(resource.requestsStarted == 2)

            await backend.failNextPull(status: .notFound, retryAfter: nil)
            resource.refresh()
            while status?.failure == nil { status = await updates.next() }
            #expect(status?.failure?.kind == .unrecoverable)
            #expect(status?.failure?.message == "HTTP 404")
        }
    }
}
