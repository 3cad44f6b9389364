import Foundation
import Logging
import ServerTestApp
import StateLoopServer
import StateLoopServerPostgres
import TestSupport
import Testing

/// The health routes a load balancer and an orchestrator probe: alive while the process
/// answers, ready only while a commit can go through.
@Suite("Sync server: health routes", .timeLimit(.minutes(5)))
struct HealthRouteTests {
    private static var quiet: Logger {
        var logger = Logger(label: "stateloop.server.test")
        logger.logLevel = .critical
        return logger
    }

    @Test("live answers 200; ready answers 200 while a commit goes through and 503 with Retry-After when one cannot, then 200 again")
    func readinessFollowsTheStore() async throws {
        let store = FlakyStore(try SQLiteStore())
        let server = SyncServer(store: store, access: Notes.Rules(), logger: Self.quiet)
        Notes.declare(on: server)
        try await withRunning(server) { port in
            let client = TestClient(port: port)
            let live = try await client.send("GET", "health/live", as: nil)
            #expect(live.status == 200 && String(decoding: live.body, as: UTF8.self) == #"{"status":"live"}"#)
            #expect(try await client.send("GET", "health/ready", as: nil).status == 200)
            store.failNextCommit()
            let failing = try await RouteJSONTests.exchange(port: port, "GET", "/health/ready", body: "")
            #expect(failing.status == 503 && failing.headers["retry-after"] == "1", "\(failing)")
            #expect(failing.body.contains(#""error":"unavailable""#), "\(failing.body)")
            #expect(try await client.send("GET", "health/ready", as: nil).status == 200)
            // Counted as any route.
            let metrics = String(decoding: try await client.send("GET", "metrics", as: nil).body, as: UTF8.self)
            #expect(metrics.contains(#"stateloop_requests_total{route="GET /health/ready",status="503"} 1"#), "\(metrics)")
        }
    }

    @Test("no health routes when the configuration says none")
    func optional() async throws {
        let server = SyncServer(
            store: try SQLiteStore(), access: Notes.Rules(), configuration: SyncServerConfiguration(healthPath: nil), logger: Self.quiet)
        try await withRunning(server) { port in
            let answer = try await TestClient(port: port).send("GET", "health/ready", as: nil)
            #expect(answer.status == 404)
        }
    }

    @Test(
        "on PostgreSQL: not ready within the store's deadline while the database is away, ready again once it is back",
        .enabled(if: StoreKind.postgresTestsEnabled, "STATELOOP_POSTGRES_TESTS=0")
    )
    func readinessOnPostgres() async throws {
        guard postgresIsInstalled() else { return }
        // A server of its own: this test pauses it.
        let database = try await ThrowawayPostgres.start()
        do {
            let url = "postgres://\(database.user)@127.0.0.1:\(database.port)/\(try await database.createDatabase("health"))"
            let store = try await openingPatiently { try await PostgresStore(url: url, deadline: .seconds(1), logger: Self.quiet) }
            defer { store.close() }
            let server = SyncServer(store: store, access: Notes.Rules(), logger: Self.quiet)
            try await withRunning(server) { port in
                let client = TestClient(port: port)
                #expect(try await client.send("GET", "health/ready", as: nil).status == 200)
                try await database.pause()
                let started = ContinuousClock.now
                let away = try await client.send("GET", "health/ready", as: nil)
                print("readiness answered \(away.status) after \(ContinuousClock.now - started) with the database paused (deadline 1 s)")
                #expect(away.status == 503)
                #expect(try await client.send("GET", "health/live", as: nil).status == 200, "alive all the same")
                try await database.resume()
                let back = await eventually(within: .seconds(30)) {
                    (try? await client.send("GET", "health/ready", as: nil).status) == 200
                }
                #expect(back, "not ready again once the database was back")
            }
        } catch {
            await database.stop()
            throw error
        }
        await database.stop()
    }
}
