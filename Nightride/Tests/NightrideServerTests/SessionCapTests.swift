import Foundation
import NightrideHarness
import NightrideModel
import StateLoopWire
import TestSupport
import Testing

@testable import NightrideServer

/// The cap on a user's live sessions over loopback: signing in again and again grows nothing
/// stored. The only real-clock wait is the bounded one for a socket to close.
@Suite("Nightride session cap", .timeLimit(.minutes(6)))
struct SessionCapTests {
    @Test(
        "1,000 sign-ins of one user: the account record keeps its size, live sessions stay at the cap, the oldest token is refused (401) and its push socket closed, the newest accepted"
    )
    func sessionsCapped() async throws {
        try await withNightride(.init(epoch: 1, loginLimits: .scriptedClients, passwordCost: 4)) { harness, loopback in
            let owner = AddressedClient(port: loopback.port, source: "127.0.0.1")
            var tokens = [try await owner.token("ann", "pw")]
            let recordSize = try JSONEncoder().encode(try #require(await harness.server.account("ann"))).count
            for _ in 1..<20 { tokens.append(try await owner.token("ann", "pw")) }
            // The oldest session's push socket is open when the 21st sign-in ends it.
            let inbox = loopback.pushes("/me/driver-mode/push", token: tokens[0], as: Bool.self)
            defer { inbox.close() }
            _ = try await inbox.next()
            #expect(harness.stats.openSockets == 1)
            while tokens.count < 1_000 { tokens.append(try await owner.token("ann", "pw")) }
            #expect(await eventually(within: .seconds(20)) { harness.stats.openSockets == 0 }, "the ended session's socket stays open")

            #expect(try JSONEncoder().encode(try #require(await harness.server.account("ann"))).count == recordSize)
            #expect(try await harness.server.liveSessions(of: "ann").count == 20)
            #expect(try await owner.status(of: "/me/driver-mode", token: tokens[0]) == 401)
            #expect(try await owner.status(of: "/me/driver-mode", token: tokens[979]) == 401)
            #expect(try await owner.status(of: "/me/driver-mode", token: tokens[980]) == 200)
            #expect(try await owner.status(of: "/me/driver-mode", token: tokens[999]) == 200)
        }
    }
}
