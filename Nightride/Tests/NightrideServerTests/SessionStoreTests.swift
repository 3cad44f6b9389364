import Foundation
import StateLoopServer
import Testing

@testable import NightrideServer

/// Nightride's sessions are the kit's: those its data files already hold keep their users
/// signed in, counted and revocable, whatever the case of the name.
@Suite("Nightride sessions in the store")
struct SessionStoreTests {
    /// A server with its data in memory, not started, and the account "Ann" in it.
    static func server() async throws -> NightrideServer {
        let server = NightrideServer(configuration: .init(epoch: 1, passwordCost: 4))
        try await server.openData().sync.update { transaction in
            try StoreWorld.operate(in: transaction, at: .zero, rules: StoreWorldTests.rules) { operation in
                _ = try operation.world.signIn(name: "Ann", proof: .sets(hash: "h")) { _ in [] }
            }
        }
        return server
    }

    /// A slot as Nightride stored it before the kit kept sessions.
    struct SlotBeforeKit: Codable, Sendable {
        var user: String
        var expiresAt: Double?
        var digest: String?
        var serial: UInt64?
    }

    @Test(
        "a session Nightride stored before the kit (a slot under the account's case-folded name, its user as created) is accepted, counted and revoked in any case, and new ones join its slots"
    )
    func slotsFromBeforeTheKit() async throws {
        let server = try await Self.server()
        let secret = String(repeating: "fedcba9876543210", count: 4)
        let account = String(Sessions.digest(of: "ann").prefix(32))
        try await server.openData().sync.update { transaction in
            let slot = SlotBeforeKit(user: "Ann", digest: Sessions.digest(of: secret), serial: 1)
            try transaction.write(slot, to: ServerResource("session", of: SlotBeforeKit.self), account + "/00")
        }
        let token = account + "00" + secret
        #expect(try await server.user(forToken: token) == "Ann")
        #expect(try await server.liveSessions(of: "ANN").count == 1)
        let life = try await server.openData()
        let newer = try await life.sessions.issue(to: "Ann", on: life.sync)
        #expect(newer.prefix(34) == account + "01", "a new session takes the account's next slot")
        try await server.revokeSessions(of: "aNN")
        #expect(try await server.user(forToken: token) == nil)
        #expect(try await server.user(forToken: newer) == nil)
    }

    @Test("a session from before slots (under its token's digest, listed in the account) is accepted until a revocation ends it")
    func sessionsFromBeforeSlots() async throws {
        for revokesAll in [false, true] {
            let server = try await Self.server()
            let old = String(repeating: "0123456789abcdef", count: 4)
            try await server.openData().sync.update { transaction in
                var account = try #require(try transaction.read(NightrideResources.account, "ann"))
                account.sessions = [Sessions.digest(of: old)]
                try transaction.write(account, to: NightrideResources.account, "ann")
                try transaction.write(
                    SessionsBeforeSlots.Record(user: "Ann", expiresAt: nil), to: SessionsBeforeSlots.resource, Sessions.digest(of: old))
            }
            #expect(try await server.user(forToken: old) == "Ann")
            try await server.revokeSessions(of: revokesAll ? nil : "ann")
            #expect(try await server.user(forToken: old) == nil, revokesAll ? "revoked with everyone's" : "revoked with Ann's")
            if !revokesAll {
                #expect(try await server.openData().sync.read { try $0.read(NightrideResources.account, "ann")?.sessions } == nil)
            }
        }
    }
}
