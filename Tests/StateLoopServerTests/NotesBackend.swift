import Foundation
import Hummingbird
import Logging
import NIOCore
import ServerTestApp
import StateLoopServer
import StateLoopServerTesting
import StateLoopSyncTransports
import StateLoopWire
import Synchronization
import Testing

/// Runs a notes server on a free loopback port for the duration of `body`, then stops it.
func withNotesServer(
    store: (any ServerStore)? = nil,
    configuration: SyncServerConfiguration = SyncServerConfiguration(),
    _ body: (SyncServer<Notes.Rules>, TestClient) async throws -> Void
) async throws {
    var logger = Logger(label: "stateloop.server.test")
    logger.logLevel = .critical
    let server = SyncServer(store: try store ?? SQLiteStore(), access: Notes.Rules(), configuration: configuration, logger: logger)
    Notes.declare(on: server)
    try await withRunning(server) { port in try await body(server, TestClient(port: port)) }
}

/// Runs `server` on a free loopback port for the duration of `body`, which gets the port, then
/// stops it (``SyncHost/stop()``). `middleware` and `routes` are the application's.
func withRunning<Access: AccessPolicy>(
    _ server: SyncServer<Access>, requestHeadTimeout: Duration = .seconds(10), requestBodyTimeout: Duration = .seconds(30),
    maximumConnections: Int = 10_000,
    additionalChannelHandlers: @escaping @Sendable () -> [any RemovableChannelHandler] = { [] },
    middleware: (Router<SyncRequestContext>) -> Void = { _ in }, routes: (Router<SyncRequestContext>) -> Void = { _ in },
    _ body: (Int) async throws -> Void
) async throws {
    let (host, port) = try await startHost(
        server, requestHeadTimeout: requestHeadTimeout, requestBodyTimeout: requestBodyTimeout, maximumConnections: maximumConnections,
        additionalChannelHandlers: additionalChannelHandlers,
        middleware: middleware, routes: routes
    )
    var failure: (any Error)?
    do {
        try await body(port)
    } catch {
        failure = error
    }
    await host.stop()
    if let failure { throw failure }
}

/// `server` and its application started by a host on a free loopback port: the host (to stop
/// it) and the port. `applicationOnly`: the application alone, as an app that leaves the sync
/// server out of its service group runs it.
func startHost<Access: AccessPolicy>(
    _ server: SyncServer<Access>, requestHeadTimeout: Duration = .seconds(10), requestBodyTimeout: Duration = .seconds(30),
    maximumConnections: Int = 10_000, shutdownTimeout: Duration = .seconds(5),
    applicationOnly: Bool = false,
    additionalChannelHandlers: @escaping @Sendable () -> [any RemovableChannelHandler] = { [] },
    middleware: (Router<SyncRequestContext>) -> Void = { _ in }, routes: (Router<SyncRequestContext>) -> Void = { _ in }
) async throws -> (host: SyncHost, port: Int) {
    var logger = Logger(label: "stateloop.server.test")
    logger.logLevel = .critical
    // Made once: these hosts are started once, on port 0.
    let application = server.application(
        port: 0, requestHeadTimeout: requestHeadTimeout, requestBodyTimeout: requestBodyTimeout, maximumConnections: maximumConnections,
        additionalChannelHandlers: additionalChannelHandlers,
        middleware: middleware, routes: routes
    )
    let host = SyncHost(shutdownTimeout: shutdownTimeout, logger: logger) { _ in
        applicationOnly ? .init(application) : .init(server, application: application)
    }
    return (host, try await host.start())
}

/// Plain HTTP against the test server, as the test apps' users (token `t-<user>`).
struct TestClient: Sendable {
    let port: Int

    /// A request as `user` (`nil`: no token) with an optional body and mutation id; returns
    /// the status and the body.
    func send(
        _ method: String, _ path: String, as user: String?, body: Data? = nil, mutationID: String? = nil,
        clientID: String? = nil
    ) async throws -> (status: Int, body: Data) {
        var headers: [String: String] = [:]
        if let user { headers["Authorization"] = "Bearer t-\(user)" }
        if let mutationID { headers["Mutation-ID"] = mutationID }
        if let clientID { headers["Client-ID"] = clientID }
        if body != nil { headers["Content-Type"] = "application/json" }
        let answer = try await TestHTTPClient(port: port).send(method, path, headers: headers, body: body)
        return (answer.status, answer.body)
    }

    /// A mutation posting `value` as JSON.
    func mutate(_ path: String, as user: String, _ value: some Encodable, id: String) async throws -> (status: Int, body: Data) {
        try await send("POST", path, as: user, body: JSONEncoder().encode(value), mutationID: id)
    }

    /// The error code of an error body.
    static func errorCode(_ body: Data) -> String? {
        TestHTTPResponse(status: 0, body: body).errorBody?.error
    }
}
