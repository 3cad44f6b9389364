import Foundation
import Hummingbird
import Logging
import StateLoopServerTesting
import StateLoopTesting
import StateLoopWire
import Synchronization
import TestSupport
import Testing

@testable import StateLoopServer

/// The kit's sessions: issued in a transaction, checked with one read, ended by their lifetime
/// on the injected clock, by the cap and by revocations, which close push sockets.
@Suite("Sessions", .timeLimit(.minutes(5)))
struct SessionsTests {
    static let start = Date(timeIntervalSince1970: 1_800_000_000)
    static let board = ServerResource("board", of: Int.self)

    /// An app's access rules on the kit's sessions: a bearer token names a user, who reads the
    /// board.
    struct Rules: AccessPolicy {
        let sessions: Sessions

        func principal(for request: Request) async throws -> String? {
            guard let token = request.bearerToken else { return nil }
            return try await sessions.user(forToken: token)
        }

        func id(of user: String) -> String { user }
        func mayRead(_ key: ResourceKey, as user: String) -> Bool { key.resource == "board" }
        func mayWrite(_ key: ResourceKey, as user: String) -> Bool { false }
    }

    /// A sync server on an in-memory store, its sessions on `clock` from ``start``.
    static func server(
        clock: TestClock = TestClock(), lifetime: Duration? = .seconds(3_600), maximumPerUser: Int = 20,
        userKey: @escaping @Sendable (String) -> String = { $0 }, configuration: SyncServerConfiguration = SyncServerConfiguration()
    ) throws -> SyncServer<Rules> {
        let store = try SQLiteStore()
        let sessions = Sessions(
            store: store, lifetime: lifetime, maximumPerUser: maximumPerUser, clock: WallClock(clock, startingAt: start), userKey: userKey
        )
        var logger = Logger(label: "stateloop.sessions.test")
        logger.logLevel = .critical
        return SyncServer(store: store, access: Rules(sessions: sessions), configuration: configuration, logger: logger)
    }

    /// Every stored session row, id and JSON, as a copy of the database would hold them.
    static func storedRows(of server: SyncServer<Rules>) async throws -> [(id: String, json: String)] {
        try await server.read { transaction in
            try transaction.values(of: Sessions.resource, prefix: "", limit: 1_000).map { row in
                (row.id, String(decoding: try JSONEncoder().encode(row.value), as: UTF8.self))
            }
        }
    }

    @Test("a session is accepted until its lifetime has passed on the injected clock, or its user's sessions are revoked, and only its user's")
    func lifecycle() async throws {
        let clock = TestClock()
        let server = try Self.server(clock: clock)
        let sessions = server.access.sessions
        let ann = try await sessions.issue(to: "ann", on: server)
        await clock.advance(by: .seconds(1_000))
        let annLater = try await sessions.issue(to: "ann", on: server)
        let bob = try await sessions.issue(to: "bob", on: server)
        #expect(try await sessions.user(forToken: ann) == "ann")
        #expect(try await sessions.user(forToken: "nope") == nil)
        #expect(try await sessions.user(forToken: String(ann.dropLast()) + (ann.last == "0" ? "1" : "0")) == nil, "another secret in the slot")
        #expect(
            try await server.read { try sessions.live(of: "ann", in: $0) }.map(\.expiresAt) == [
                Self.start.addingTimeInterval(3_600), Self.start.addingTimeInterval(4_600),
            ])

        await clock.advance(by: .seconds(2_599))
        #expect(try await sessions.user(forToken: ann) == "ann", "a second before its end")
        await clock.advance(by: .seconds(1))
        #expect(try await sessions.user(forToken: ann) == nil, "expired at its end")
        #expect(try await sessions.user(forToken: annLater) == "ann")
        #expect(try await server.read { try sessions.live(of: "ann", in: $0) }.count == 1)

        try await server.update { try sessions.revoke(of: "ann", in: $0) }
        #expect(try await sessions.user(forToken: annLater) == nil)
        #expect(try await sessions.user(forToken: bob) == "bob", "bob's session is not ann's")
        try await server.update { try sessions.revokeAll(in: $0) }
        #expect(try await sessions.user(forToken: bob) == nil)
        #expect(try await sessions.user(forToken: try await sessions.issue(to: "ann", on: server)) == "ann", "a revoked user signs in again")
    }

    @Test("a token is 98 hexadecimal digits ending in 256 random bits; the store keeps only the secret's digest, so a copy of it holds no token")
    func storedAsDigests() async throws {
        let server = try Self.server()
        let sessions = server.access.sessions
        var tokens: [String] = []
        for user in ["ann", "ann", "bob"] { tokens.append(try await sessions.issue(to: user, on: server)) }
        #expect(tokens.allSatisfy { $0.utf8.count == 98 && $0.allSatisfy(\.isHexDigit) })
        let rows = try await Self.storedRows(of: server)
        #expect(rows.count == 3)
        for token in tokens {
            let secret = String(token.suffix(64))
            #expect(!rows.contains { $0.id.contains(secret) || $0.json.contains(secret) }, "a secret is stored")
            #expect(rows.contains { $0.json.contains(SHA256.hex(secret.utf8)) })
        }
        let secrets = (0..<10_000).map { _ in Sessions.newSecret() }
        #expect(Set(secrets).count == 10_000)
        #expect(secrets.allSatisfy { $0.utf8.count == 64 && $0.allSatisfy(\.isHexDigit) })
    }

    @Test(
        "at the cap, a sign-in ends the oldest live session and takes its slot; a user's rows never pass the cap; a lowered cap ends the sessions past it"
    )
    func cap() async throws {
        let clock = TestClock()
        let server = try Self.server(clock: clock, lifetime: nil, maximumPerUser: 3)
        let sessions = server.access.sessions
        var tokens: [String] = []
        for _ in 0..<10 { tokens.append(try await sessions.issue(to: "ann", on: server)) }
        for (index, token) in tokens.enumerated() {
            #expect(try await sessions.user(forToken: token) == (index >= 7 ? "ann" : nil), "token \(index)")
        }
        #expect(try await Self.storedRows(of: server).count == 3)

        let lowered = Sessions(store: server.store, lifetime: nil, maximumPerUser: 2, clock: WallClock(clock, startingAt: Self.start))
        let newest = try await lowered.issue(to: "ann", on: server)
        let live = try await [tokens[7], tokens[8], tokens[9], newest].asyncMap { try await lowered.user(forToken: $0) != nil }
        #expect(live.filter { $0 }.count == 2, "\(live)")
        #expect(live[3], "the new session is live")
    }

    @Test("two sessions issued in one transaction take two slots")
    func twoInOneTransaction() async throws {
        let server = try Self.server(maximumPerUser: 2)
        let sessions = server.access.sessions
        let (first, second) = try await server.update { transaction in
            (try sessions.issue(to: "ann", in: transaction), try sessions.issue(to: "ann", in: transaction))
        }
        #expect(try await sessions.user(forToken: first) == "ann")
        #expect(try await sessions.user(forToken: second) == "ann")
        // And the third, past the cap, ends the first of them.
        let third = try await server.update { try sessions.issue(to: "ann", in: $0) }
        #expect(try await sessions.user(forToken: first) == nil)
        #expect(try await sessions.user(forToken: third) == "ann")
    }

    @Test("a session issued in a transaction that throws does not exist: an account and its session commit together")
    func issuedWithTheTransaction() async throws {
        let server = try Self.server()
        let sessions = server.access.sessions
        let accounts = ServerResource("account", of: String.self)
        let leaked = Latest<String>()
        struct NameTaken: Error {}
        await #expect(throws: NameTaken.self) {
            try await server.update { transaction in
                try transaction.write("hash", to: accounts, "ann")
                leaked.set(try sessions.issue(to: "ann", in: transaction))
                throw NameTaken()
            }
        }
        #expect(try await sessions.user(forToken: try #require(leaked.value)) == nil)
        #expect(try await Self.storedRows(of: server).isEmpty)
        let token = try await server.update { transaction in
            try transaction.write("hash", to: accounts, "ann")
            return try sessions.issue(to: "ann", in: transaction)
        }
        #expect(try await sessions.user(forToken: token) == "ann")
    }

    @Test("expiries are wall-clock times: a server started again on the file, later, keeps the session until its end")
    func survivesRestart() async throws {
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("sessions-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: folder) }
        let path = folder.appendingPathComponent("server.sqlite").path
        let token: String
        do {
            let store = try SQLiteStore(path: path)
            let sessions = Sessions(store: store, lifetime: .seconds(3_600), clock: WallClock(TestClock(), startingAt: Self.start))
            let server = SyncServer(store: store, access: Rules(sessions: sessions))
            token = try await sessions.issue(to: "ann", on: server)
        }
        // A new process half an hour later: its clock starts again from zero.
        let store = try SQLiteStore(path: path)
        let clock = TestClock()
        let sessions = Sessions(store: store, lifetime: .seconds(3_600), clock: WallClock(clock, startingAt: Self.start.addingTimeInterval(1_800)))
        #expect(try await sessions.user(forToken: token) == "ann")
        await clock.advance(by: .seconds(1_800))
        #expect(try await sessions.user(forToken: token) == nil, "its hour is over")
    }

    @Test("checking a token is one read of the store, in no transaction")
    func oneRead() async throws {
        let store = CountingStore(try SQLiteStore())
        let sessions = Sessions(store: store, clock: WallClock(TestClock(), startingAt: Self.start))
        let server = SyncServer(store: store, access: Rules(sessions: sessions))
        let token = try await sessions.issue(to: "ann", on: server)
        let before = store.counts
        #expect(try await sessions.user(forToken: token) == "ann")
        #expect(try await sessions.user(forToken: String(repeating: "0", count: 98)) == nil)
        let after = store.counts
        #expect(after.keyReads - before.keyReads == 2 && after.transactions == before.transactions, "\(before) → \(after)")
        #expect(try await sessions.user(forToken: "not a token") == nil)
        #expect(store.counts.keyReads == after.keyReads, "a string that is no token reads nothing")
    }

    @Test("the stored form: a session written as the kit has always stored it is accepted, counted and revoked; a new one is stored so")
    func storedForm() async throws {
        let server = try Self.server(lifetime: nil, userKey: { $0.lowercased() })
        let sessions = server.access.sessions
        // Written by hand in the stored form: resource `session`, id `<first 32 hex digits of
        // SHA-256(user key)>/<two-digit slot>`, the token being those digits without the slash
        // followed by the secret, whose SHA-256 digest (of its hexadecimal text) is kept.
        let secret = String(repeating: "0123456789abcdef", count: 4)
        let owner = String(SHA256.hex("ann".utf8).prefix(32))
        let stored = ServerResource("session", of: [String: StoredField].self)
        try await server.update { transaction in
            try transaction.write(
                ["user": .text("Ann"), "digest": .text(SHA256.hex(secret.utf8)), "serial": .number(1)], to: stored, owner + "/00"
            )
        }
        let token = owner + "00" + secret
        #expect(try await sessions.user(forToken: token) == "Ann")
        #expect(try await server.read { try sessions.live(of: "ANN", in: $0) } == [Sessions.LiveSession(user: "Ann", expiresAt: nil)])
        // A new session of the same user, in another spelling, takes the next slot of the same user.
        let issued = try await sessions.issue(to: "aNN", on: server)
        #expect(issued.prefix(34) == owner + "01")
        let row = try #require(try await Self.storedRows(of: server).first { $0.id == owner + "/01" })
        #expect(row.json.contains(#""digest":"\#(SHA256.hex(issued.suffix(64).utf8))""#) && row.json.contains(#""user":"aNN""#))
        try await server.update { try sessions.revoke(of: "ann", in: $0) }
        #expect(try await sessions.user(forToken: token) == nil)
        #expect(try await sessions.user(forToken: issued) == nil)
    }

    @Test("a session ended by the cap or a revocation closes its user's push sockets once committed, with no session check to wait for")
    func endedSessionsCloseSockets() async throws {
        // No periodic session check: only the close after the commit ends these sockets.
        let server = try Self.server(maximumPerUser: 1, configuration: SyncServerConfiguration(sessionCheckInterval: nil))
        let sessions = server.access.sessions
        server.serve(Self.board, at: "board") { _, _ in "main" }
        try await server.update { try $0.write(1, to: Self.board, "main") }
        try await withRunning(server) { port in
            func socket(_ token: String) async throws -> TestPushSocket {
                let reader = TestPushSocket(port: port, path: "board/push", as: nil, token: token)
                #expect(await eventually(within: .seconds(20)) { reader.received.count == 1 }, "the socket opened")
                return reader
            }
            // The cap: ann's second sign-in ends her first session.
            let first = try await socket(try await sessions.issue(to: "ann", on: server))
            let second = try await sessions.issue(to: "ann", on: server)
            #expect(try await first.closeFrame(within: .seconds(20)) != nil)
            // A revocation of ann, made in a mutation-free update.
            let annSocket = try await socket(second)
            let bob = try await socket(try await sessions.issue(to: "bob", on: server))
            try await server.update { try sessions.revoke(of: "ann", in: $0) }
            #expect(try await annSocket.closeFrame(within: .seconds(20)) != nil)
            #expect(bob.ending == nil, "bob's socket is not ann's")
            // Every session.
            try await server.update { try sessions.revokeAll(in: $0) }
            #expect(try await bob.closeFrame(within: .seconds(20)) != nil)
        }
    }
}

/// The latest value a closure saw, for the test to read.
final class Latest<Value: Sendable>: Sendable {
    private let latest = Mutex<Value?>(nil)

    init() {}

    func set(_ value: Value) {
        latest.withLock { $0 = value }
    }

    var value: Value? { latest.withLock { $0 } }
}

/// A field of a stored row written by hand.
enum StoredField: Codable, Sendable {
    case text(String)
    case number(Double)

    func encode(to encoder: any Encoder) throws {
        var container = encoder.singleValueContainer()
        switch self {
        case .text(let text): try container.encode(text)
        case .number(let number): try container.encode(number)
        }
    }

    init(from decoder: any Decoder) throws {
        let container = try decoder.singleValueContainer()
        if let text = try? container.decode(String.self) {
            self = .text(text)
        } else {
            self = .number(try container.decode(Double.self))
        }
    }
}

extension Array {
    /// The elements transformed one after the other by an asynchronous function.
    func asyncMap<T>(_ transform: (Element) async throws -> T) async rethrows -> [T] {
        var results: [T] = []
        for element in self { results.append(try await transform(element)) }
        return results
    }
}

/// A store that counts how it is read: keyed reads, and transactions (reads and writes).
final class CountingStore: ServerStore {
    private let base: any ServerStore
    private let counted = Mutex((keyReads: 0, transactions: 0))

    init(_ base: any ServerStore) {
        self.base = base
    }

    var counts: (keyReads: Int, transactions: Int) { counted.withLock { $0 } }

    var epoch: UInt64 { base.epoch }

    func write<Result: Sendable>(_ body: @Sendable (any StoreTransaction) throws -> Result) async throws -> Result {
        counted.withLock { $0.transactions += 1 }
        return try await base.write(body)
    }

    func read<Result: Sendable>(_ body: @Sendable (any StoreTransaction) throws -> Result) async throws -> Result {
        counted.withLock { $0.transactions += 1 }
        return try await base.read(body)
    }

    func read(_ key: ResourceKey, lastMutationIDOf client: ClientID?, scope: String) async throws -> (value: StoredValue?, lastMutationID: UInt64?) {
        counted.withLock { $0.keyReads += 1 }
        return try await base.read(key, lastMutationIDOf: client, scope: scope)
    }

    func forgetClients(idleSince cutoff: Date) async throws -> Int {
        try await base.forgetClients(idleSince: cutoff)
    }

    func observeCommits(_ observer: @escaping @Sendable (CommittedChanges) -> Void) {
        base.observeCommits(observer)
    }

    func changes(after sequence: UInt64, limit: Int) async throws -> [StoredChange] {
        try await base.changes(after: sequence, limit: limit)
    }

    func forgetChanges(committedBefore cutoff: Date) async throws -> Int {
        try await base.forgetChanges(committedBefore: cutoff)
    }
}
