import Foundation
import Logging
import NightrideClient
import NightrideModel
import NightrideServer
import StateLoopSync
import StateLoopSyncTransports
import StateLoopTesting
import Testing

/// What the server tells a client about its own session: which of its mutations a value
/// contains (`lastMutationID`), and when its token stops working.
@Suite("Nightride server sessions", .timeLimit(.minutes(4)))
struct SessionTests {
    @Test("values tell each client the newest of its mutations they contain, by GET and by push, refused ones included")
    func lastMutationID() async throws {
        try await withNightride { _, client in
            let ann = try await client.login("ann")
            let mine = ClientID(rawValue: "phone")
            let pushes = client.pushes("/me/driver-mode/push", token: ann, query: "?clientID=phone", as: Bool.self)
            defer { pushes.close() }
            #expect(try await pushes.next().lastMutationID == nil, "nothing processed yet")

            let send = client.sender("/me/driver-mode", token: ann, as: DriverModeChange.self)
            _ = try await send(DriverModeChange(on: true), MutationID(client: mine, sequence: 1))
            let pushed = try await pushes.next()
            #expect(pushed.value == true)
            #expect(pushed.lastMutationID == 1)

            let data = try await client.raw("GET", "/me/driver-mode", headers: ["Authorization": "Bearer \(ann)", "Client-ID": "phone"]).1
            #expect(try JSONDecoder().decode(Versioned<Bool>.self, from: data).lastMutationID == 1)
            #expect(try await client.pull("/me/driver-mode", token: ann, as: Bool.self)().lastMutationID == nil, "another reader, no number")

            // A refused mutation is processed too: the next value says so.
            let (status, _) = try await client.send(
                "POST", "/me/ride", token: ann, body: RideAction.accept, mutationID: MutationID(client: mine, sequence: 2).rawValue)
            #expect(status == 409)
            _ = try await send(DriverModeChange(on: false), MutationID(client: mine, sequence: 3))
            #expect(try await pushes.next().lastMutationID == 3)
        }
    }

    @Test("a token stops working once its lifetime has passed on the server's clock: 401 on routes and push upgrades")
    func tokenExpiry() async throws {
        let clock = TestClock()
        try await withNightride(.init(epoch: 1, tokenLifetime: .seconds(3_600)), clock: clock) { _, client in
            let ann = try await client.login("ann")
            #expect(try await client.send("GET", "/me/ride", token: ann).0 == 200)
            await clock.advance(by: .seconds(3_599))
            #expect(try await client.send("GET", "/me/ride", token: ann).0 == 200)
            await clock.advance(by: .seconds(1))
            #expect(try await client.send("GET", "/me/ride", token: ann).0 == 401)
            #expect(try await client.send("POST", "/me/driver-mode", token: ann, body: DriverModeChange(on: true)).0 == 401)
            #expect(await client.upgradeIsRefused("/me/ride/push", token: ann))
            let again = try await client.login("ann")
            #expect(try await client.send("GET", "/me/ride", token: again).0 == 200)
        }
    }
}
