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

    @Test("a token is stored as its digest; it ends with its lifetime or a revocation of its user, and only of its user")
    func lifecycle() async throws {
        let store = try SQLiteStore()
        let server = SyncServer(store: store, access: StoreWorldTests.NoAccess())
        try await server.update { transaction in
            for user in ["ann", "bob"] {
                try StoreWorld.operate(in: transaction, at: .zero, rules: StoreWorldTests.rules) { operation in
                    _ = try operation.signIn(name: user, proof: .sets(hash: "h")) { _ in [] }
                }
            }
            try Sessions.issue("t1", to: "ann", account: "ann", expiresAt: 100, at: 0, in: transaction)
            try Sessions.issue("t2", to: "ann", account: "ann", expiresAt: nil, at: 0, in: transaction)
            try Sessions.issue("t3", to: "bob", account: "bob", expiresAt: nil, at: 0, in: transaction)
        }
        func user(_ token: String, at now: Double) async throws -> String? {
            try await Sessions.user(forToken: token, at: now, in: store)
        }
        #expect(try await user("t1", at: 50) == "ann")
        #expect(try await user("t1", at: 100) == nil, "expired at its end")
        #expect(try await user("t2", at: 1e9) == "ann")
        #expect(try await user("nope", at: 0) == nil)

        // Stored under digests: no token is a key, no token is in a value.
        let stored = try await server.update { try $0.values(of: Sessions.resource, prefix: "", limit: 10) }
        #expect(Set(stored.map(\.id)) == Set(["t1", "t2", "t3"].map(Sessions.digest(of:))))
        // A sign-in after t1 ended drops it from ann's list.
        try await server.update { transaction in
            try Sessions.issue("t4", to: "ann", account: "ann", expiresAt: nil, at: 150, in: transaction)
        }
        let listed = try await server.update { try $0.read(NightrideResources.account, "ann")?.sessions }
        #expect(listed == ["t2", "t4"].map(Sessions.digest(of:)))

        try await server.update { try Sessions.revoke(account: "ann", in: $0) }
        let (second, fourth) = (try await user("t2", at: 200), try await user("t4", at: 200))
        #expect(second == nil && fourth == nil)
        #expect(try await user("t3", at: 200) == "bob", "bob's session is not ann's")
        try await server.update { try Sessions.revokeAll(in: $0) }
        #expect(try await user("t3", at: 200) == nil)
    }
}
