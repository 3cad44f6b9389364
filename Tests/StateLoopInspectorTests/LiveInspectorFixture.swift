import InspectorTestSupport
import Logging
import StateLoopInspectorServer
import TestSupport
import Testing

/// What the live inspector suites share: a server on a free loopback port, the address of its
/// page socket, and the first app a page lists.

/// A logger that says nothing short of a crash.
var quiet: Logger {
    var logger = Logger(label: "inspector.test")
    logger.logLevel = .critical
    return logger
}

/// Runs an inspector on a free loopback port for the duration of `body`.
func withInspectorServer(
    isolation: isolated (any Actor)? = #isolation,
    _ body: (InspectorServer) async throws -> Void
) async throws {
    let server = try InspectorServer(configuration: .init(port: 0), logger: quiet)
    try await server.start()
    do {
        try await body(server)
    } catch {
        await server.stop()
        throw error
    }
    await server.stop()
}

/// `server`'s page socket, with its token.
func pageSocket(_ server: InspectorServer) throws -> String {
    "ws://127.0.0.1:\(try #require(server.port))/page?token=\(server.configuration.token)"
}

/// The id of the first app the page lists, once it lists one.
func firstApp(on page: TestPage) async throws -> Int {
    #expect(await eventually(within: .seconds(10)) { !page.apps.isEmpty }, "no app showed up on the page")
    guard case .number(let id)? = page.apps.first?["id"] else { throw NoAppID() }
    return Int(id)
}

private struct NoAppID: Error {}
