import Foundation
@testable import NightrideServer
import StateLoopServer
import Testing

/// Sessions kept in the store as digests, with expiry and revocation.
@Suite("Nightride sessions in the store")
struct SessionStoreTests {
    @Test("SHA-256 gives the standard's digests, across block boundaries")
    func sha256() {
        #expect(SHA256.hex("".utf8) == "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855")
        #expect(SHA256.hex("abc".utf8) == "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad")
        #expect(SHA256.hex("abcdbcdecdefdefgefghfghighijhijkijkljklmklmnlmnomnopnopq".utf8)
            == "248d6a61d20638b8e5c026930c3e6039a33ce45964ff2167f6ecedd419db06c1")
        let twoBlocks = "abcdefghbcdefghicdefghijdefghijkefghijklfghijklmghijklmnhijklmnoijklmnopjklmnopqklmnopqrlmnopqrsmnopqrstnopqrstu"
        #expect(SHA256.hex(twoBlocks.utf8) == "cf5b16a778af8380036ce59e7b0492370b249b11e8f07a51afac45037afee9d1")
    }

    @Test("a session is a row of its own, kept as its secret's digest; it ends with its lifetime or a revocation of its user, and only of its user")
    func lifecycle() async throws {
        let store = try SQLiteStore()
        let server = SyncServer(store: store, access: StoreWorldTests.NoAccess())
        let secrets = ["s1", "s2", "s3", "s4"].map { _ in NightrideServer.newToken() }
        try await server.update { transaction in
            for user in ["ann", "bob"] {
                try StoreWorld.operate(in: transaction, at: .zero, rules: StoreWorldTests.rules) { operation in
                    _ = try operation.signIn(name: user, proof: .sets(hash: "h")) { _ in [] }
                }
            }
        }
        // One sign-in a transaction, as the server makes them.
        var tokens: [String] = []
        for (secret, user, expiry) in [(secrets[0], "ann", 100.0), (secrets[1], "ann", nil), (secrets[2], "bob", nil)] {
            tokens.append(try await server.update { transaction in
                try Sessions.issue(secret: secret, to: user, account: user, expiresAt: expiry, at: 0, cap: 20, in: transaction).token
            })
        }
        func user(_ token: String, at now: Double) async throws -> String? {
            try await Sessions.user(forToken: token, at: now, in: store)
        }
        #expect(try await user(tokens[0], at: 50) == "ann")
        #expect(try await user(tokens[0], at: 100) == nil, "expired at its end")
        #expect(try await user(tokens[1], at: 1e9) == "ann")
        #expect(try await user("nope", at: 0) == nil)
        // Another secret in a live session's slot is refused.
        #expect(try await user(String(tokens[1].prefix(34)) + secrets[3], at: 0) == nil)

        // Stored as digests: no secret is in a key or a value; the account record holds none.
        let stored = try await server.update { try $0.values(of: Sessions.resource, prefix: "", limit: 10) }
        #expect(stored.count == 3)
        #expect(Set(stored.compactMap(\.value.digest)) == Set(secrets.prefix(3).map(Sessions.digest(of:))))
        for secret in secrets { #expect(!stored.contains { $0.id.contains(secret) }) }
        #expect(try await server.update { try $0.read(NightrideResources.account, "ann")?.sessions } == nil)
        // A sign-in after the first session ended takes its slot.
        let fourth = try await server.update { transaction in
            try Sessions.issue(secret: secrets[3], to: "ann", account: "ann", expiresAt: nil, at: 150, cap: 20, in: transaction)
        }
        #expect(fourth.token.prefix(34) == tokens[0].prefix(34) && !fourth.endedAnother)
        #expect(try await user(fourth.token, at: 150) == "ann")

        try await server.update { try Sessions.revoke(account: "ann", in: $0) }
        let (second, fourthUser) = (try await user(tokens[1], at: 200), try await user(fourth.token, at: 200))
        #expect(second == nil && fourthUser == nil)
        #expect(try await user(tokens[2], at: 200) == "bob", "bob's session is not ann's")
        try await server.update { try Sessions.revokeAll(in: $0) }
        #expect(try await user(tokens[2], at: 200) == nil)
    }

    @Test("a session from before slots (under its token's digest, listed in the account) is accepted until a revocation ends it")
    func sessionsFromBeforeSlots() async throws {
        let store = try SQLiteStore()
        let server = SyncServer(store: store, access: StoreWorldTests.NoAccess())
        let old = NightrideServer.newToken()
        try await server.update { transaction in
            try StoreWorld.operate(in: transaction, at: .zero, rules: StoreWorldTests.rules) { operation in
                _ = try operation.signIn(name: "ann", proof: .sets(hash: "h")) { _ in [] }
            }
            var account = try #require(try transaction.read(NightrideResources.account, "ann"))
            account.sessions = [Sessions.digest(of: old)]
            try transaction.write(account, to: NightrideResources.account, "ann")
            try transaction.write(Sessions.Record(user: "ann", expiresAt: nil), to: Sessions.resource, Sessions.digest(of: old))
        }
        #expect(try await Sessions.user(forToken: old, at: 10, in: store) == "ann")
        try await server.update { try Sessions.revoke(account: "ann", in: $0) }
        #expect(try await Sessions.user(forToken: old, at: 10, in: store) == nil)
        #expect(try await server.update { try $0.read(NightrideResources.account, "ann")?.sessions } == nil)
    }

    @Test("at the cap, a sign-in ends the oldest live session and takes its slot; a user's rows never pass the cap")
    func cap() async throws {
        let store = try SQLiteStore()
        let server = SyncServer(store: store, access: StoreWorldTests.NoAccess())
        try await server.update { transaction in
            try StoreWorld.operate(in: transaction, at: .zero, rules: StoreWorldTests.rules) { operation in
                _ = try operation.signIn(name: "ann", proof: .sets(hash: "h")) { _ in [] }
            }
        }
        var tokens: [String] = []
        for index in 0..<10 {
            let issued = try await server.update { transaction in
                try Sessions.issue(secret: NightrideServer.newToken(), to: "ann", account: "ann", expiresAt: nil, at: 0, cap: 3, in: transaction)
            }
            #expect(issued.endedAnother == (index >= 3))
            tokens.append(issued.token)
        }
        for (index, token) in tokens.enumerated() {
            #expect(try await Sessions.user(forToken: token, at: 1, in: store) == (index >= 7 ? "ann" : nil))
        }
        #expect(try await server.update { try $0.values(of: Sessions.resource, prefix: "", limit: 100) }.count == 3)
    }
}
