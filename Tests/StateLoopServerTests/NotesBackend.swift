import Foundation
import Hummingbird
import Logging
import NIOCore
import ServiceLifecycle
import StateLoopServer
import StateLoopWire
import Synchronization
import ServerTestApp
import StateLoopSyncTransports
import Testing

/// Runs a notes server on a free loopback port for the duration of `body`, then shuts it down
/// gracefully (the sync server first, as an app would list it).
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
/// shuts it down gracefully (the sync server first, as an app would list it). `middleware` and
/// `routes` are the application's.
func withRunning<Access: AccessPolicy>(
    _ server: SyncServer<Access>, requestHeadTimeout: Duration = .seconds(10), requestBodyTimeout: Duration = .seconds(30),
    maximumConnections: Int = 10_000,
    additionalChannelHandlers: @escaping @Sendable () -> [any RemovableChannelHandler] = { [] },
    middleware: (Router<SyncRequestContext>) -> Void = { _ in }, routes: (Router<SyncRequestContext>) -> Void = { _ in },
    _ body: (Int) async throws -> Void
) async throws {
    let started = try await startRunning(
        server, requestHeadTimeout: requestHeadTimeout, requestBodyTimeout: requestBodyTimeout, maximumConnections: maximumConnections,
        additionalChannelHandlers: additionalChannelHandlers,
        middleware: middleware, routes: routes
    )
    var failure: (any Error)?
    do {
        try await body(started.port)
    } catch {
        failure = error
    }
    await started.services.triggerGracefulShutdown()
    _ = try? await started.running.value
    if let failure { throw failure }
}

/// `server` and its application running in a service group, once listening: the port, the
/// group (to stop it) and the task that runs it (done once it stopped).
func startRunning<Access: AccessPolicy>(
    _ server: SyncServer<Access>, requestHeadTimeout: Duration = .seconds(10), requestBodyTimeout: Duration = .seconds(30),
    maximumConnections: Int = 10_000, maximumGracefulShutdown: Duration = .seconds(5),
    applicationOnly: Bool = false,
    additionalChannelHandlers: @escaping @Sendable () -> [any RemovableChannelHandler] = { [] },
    middleware: (Router<SyncRequestContext>) -> Void = { _ in }, routes: (Router<SyncRequestContext>) -> Void = { _ in }
) async throws -> (port: Int, services: ServiceGroup, running: Task<Void, any Error>) {
    var logger = Logger(label: "stateloop.server.test")
    logger.logLevel = .critical
    let (ready, readyContinuation) = AsyncStream.makeStream(of: Int.self)
    let application = server.application(
        port: 0, requestHeadTimeout: requestHeadTimeout, requestBodyTimeout: requestBodyTimeout, maximumConnections: maximumConnections,
        additionalChannelHandlers: additionalChannelHandlers,
        middleware: middleware, routes: routes
    ) { channel in
        readyContinuation.yield(channel.localAddress?.port ?? 0)
    }
    // `applicationOnly`: as an app that left the sync server out of its service group.
    let members: [any Service] = applicationOnly ? [application] : [application, server]
    var group = ServiceGroupConfiguration(services: members, logger: logger)
    group.maximumGracefulShutdownDuration = maximumGracefulShutdown
    let services = ServiceGroup(configuration: group)
    let running = Task { try await services.run() }
    var port: Int?
    for await bound in ready {
        port = bound
        break
    }
    return (try #require(port), services, running)
}

/// Plain HTTP against the test server.
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
        return try await HTTPExchange.send(method, URL(string: "http://127.0.0.1:\(port)/\(path)")!, headers: headers, body: body)
    }

    /// A mutation posting `value` as JSON.
    func mutate(_ path: String, as user: String, _ value: some Encodable, id: String) async throws -> (status: Int, body: Data) {
        try await send("POST", path, as: user, body: JSONEncoder().encode(value), mutationID: id)
    }

    /// The error code of an error body.
    static func errorCode(_ body: Data) -> String? {
        try? JSONDecoder().decode(ErrorBody.self, from: body).error
    }
}
