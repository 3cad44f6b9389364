import Foundation
import NightrideClient
import NightrideModel
import NightrideServer
import StateLoopSync
import TestSupport
import Testing

/// Nightride on PostgreSQL: two `nightride server --postgres` processes on one database, a
/// passenger on one and a driver on the other. Every push crosses instances (a commit on one
/// reaches the sockets of the other through the database's change feed), and an instance
/// killed with SIGKILL loses nothing its clients were told.
@MainActor
@Suite(
    "Nightride on PostgreSQL: two instances", .serialized, .timeLimit(.minutes(6)),
    .enabled(if: ThrowawayPostgres.testsEnabled, "STATELOOP_POSTGRES_TESTS=0"))
struct MultiInstanceTests {
    @Test(
        "ann on one instance, bob on the other: the ride goes through both; bob's instance killed with SIGKILL and started again, bob's next step reaches both"
    )
    func twoInstances() async throws {
        guard let database = try await newPostgresDatabase() else { return }
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("nightride-instances-\(UUID().uuidString)").path
        try FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(atPath: folder) }
        let arguments = ["server", "--postgres", database, "--inactivity", "600", "--password-cost", "4"]
        let first = try ChildProcess("nightride", arguments + ["--port", "0"])
        var second = try ChildProcess("nightride", arguments + ["--port", "0"])
        let firstPort = try #require(DurableServerTests.port(announcedBy: first), "the first instance did not say where it listens")
        let secondPort = try #require(DurableServerTests.port(announcedBy: second), "the second instance did not say where it listens")

        func client(_ name: String, port: Int) async throws -> NightrideClient {
            let api = try await NightrideAPI.login(server: URL(string: "http://127.0.0.1:\(port)")!, name: name, password: "\(name)-pw")
            return try NightrideClient(api: api, options: ClientOptions(journalPath: folder + "/\(name).journal", policy: ClientOptions.demoPolicy))
        }
        let ann = try await client("ann", port: firstPort)
        let bob = try await client("bob", port: secondPort)
        defer {
            ann.stop()
            bob.stop()
            _ = first.kill()
            _ = second.kill()
        }
        let durable = DurableServerTests()
        bob.perform(.toggleDriverMode)
        await durable.until("bob waits for a ride", ann, bob) { bob.state.screen == .driverWaiting && !bob.state.isOptimistic }
        ann.perform(.requestRide(to: PlaceCatalog().search("gare", limit: 1)[0]))
        await durable.until("bob, on the other instance, is offered ann's ride", ann, bob) { bob.state.screen == .driverAccepting }
        bob.perform(.acceptRide)
        await durable.until("ann, on the first instance, sees bob coming", ann, bob) {
            ann.state.screen == .passengerDriverComing && bob.state.screen == .driverGoingToPassenger && !bob.state.isOptimistic
        }

        let killed = second.kill()
        #expect(killed.signal == SIGKILL)
        second = try ChildProcess("nightride", arguments + ["--port", "\(secondPort)"])
        #expect(DurableServerTests.port(announcedBy: second) == secondPort, "the second instance came back on its port")
        let restarted = ContinuousClock.now
        bob.perform(.arrive)
        await durable.until("bob's arrival, through the restarted instance, reaches ann on the other", ann, bob) {
            ann.state.screen == .riding && bob.state.screen == .riding && !bob.state.isOptimistic
        }
        // How long it took is printed, not judged (the wait above is the hang guard): a loaded
        // machine moves it. That nobody had to sign in again is judged.
        print("after the instance's restart, the next step reached both clients in \(restarted.duration(to: .now))")
        #expect(!ann.state.isSignedOut && !bob.state.isSignedOut, "a session was lost")
    }
}
