import Foundation

/// Sign-in sessions kept in the server's store: issued at a sign-in, checked on every request
/// by the app's ``AccessPolicy``, ended by their lifetime, by a revocation, or by a sign-in past
/// the user's cap.
///
/// ```swift
/// let sessions = Sessions(store: store, lifetime: .seconds(7 * 86_400))
/// // Sign-in: the account and its session in one commit.
/// let token = try await server.update { transaction in
///     try transaction.write(account, to: accounts, name)
///     return try sessions.issue(to: name, in: transaction)
/// }
/// // The access policy's principal(for:): one read of the store.
/// let user = try await sessions.user(forToken: token)
/// // Sign out everywhere: the user's push sockets close once it is committed.
/// try await server.update { try sessions.revoke(of: name, in: $0) }
/// ```
///
/// A token is 98 lowercase hexadecimal digits: 32 that name the user's slots, 2 that name one
/// slot, and 256 random bits from the system's generator (the secret). Checking it is one read
/// of the slot it names, with no transaction. The store keeps the secret's SHA-256 digest,
/// never the token, so a copy of the database signs no one in.
///
/// Each session is a row of its own, in one of the user's numbered slots (at most
/// ``maximumPerUser``): a sign-in takes a free or expired slot, or else ends the user's oldest
/// live session and takes its slot. So signing in again and again grows nothing stored, and
/// revoking one user's sessions touches only that user's rows. Sessions live in the store's
/// resource `session`, which the app must not use for values of its own.
///
/// Times are on a ``WallClock``: expiries are stored as seconds since 1970, so that a session
/// outlives a restart of the server and ends when its lifetime does.
///
/// A session that ends through these methods (a revocation, a sign-in past the cap) closes its
/// user's push sockets once the transaction that ended it has committed, through the
/// ``SyncServer`` that committed it; a session that expires closes them at the server's next
/// ``SyncServerConfiguration/sessionCheckInterval``. Users are principals whose
/// ``AccessPolicy/id(of:)`` is the user's own string.
public struct Sessions: Sendable {
    /// The largest ``maximumPerUser``: a token names its slot with two decimal digits.
    public static let maximumPerUserLimit = 99

    /// How long a session is accepted after its sign-in; `nil` for as long as it is not ended.
    public let lifetime: Duration?
    /// The most live sessions a user holds, 1 to ``maximumPerUserLimit``.
    public let maximumPerUser: Int

    private let store: any ServerStore
    private let clock: WallClock
    private let userKey: @Sendable (String) -> String

    /// The store's rows, one a slot: `<32 digits of the user's digest>/<slot>`.
    static let resource = ServerResource("session", of: Record.self)

    /// Sessions kept in `store`, which must be the store of the ``SyncServer`` whose
    /// transactions issue and revoke them.
    ///
    /// - Parameters:
    ///   - store: The store the sessions' rows are kept in: the server's own.
    ///   - lifetime: How long a session is accepted after its sign-in; `nil` until it is ended.
    ///   - maximumPerUser: The most live sessions of one user (clamped to 1 to
    ///     ``maximumPerUserLimit``). A cap lowered later ends the sessions in slots past it at
    ///     the user's next sign-in.
    ///   - clock: Where expiries are read from: share the app's, and a test clock in tests.
    ///   - userKey: What a user's slots are kept under: the user's string as it is, by default.
    ///     An app whose user names are one user in any case passes its case folding, so that a
    ///     sign-in and a revocation in any spelling reach the same slots. Changing it later
    ///     leaves existing sessions out of the cap and of ``revoke(of:in:)``.
    public init(
        store: any ServerStore,
        lifetime: Duration? = .seconds(30 * 86_400),
        maximumPerUser: Int = 20,
        clock: WallClock = WallClock(),
        userKey: @escaping @Sendable (String) -> String = { $0 }
    ) {
        self.store = store
        self.lifetime = lifetime
        self.maximumPerUser = min(max(1, maximumPerUser), Self.maximumPerUserLimit)
        self.clock = clock
        self.userKey = userKey
    }

    // MARK: Issuing

    /// A new session of `user` in `transaction`, which commits it (or, if it throws, leaves no
    /// session): so an app's sign-in can create an account and its session in one commit.
    /// Past ``maximumPerUser`` live sessions, the oldest ends, and its push sockets close once
    /// the transaction has committed.
    ///
    /// - Returns: the token, for the client to send with every request.
    public func issue(to user: String, in transaction: ServerTransaction) throws -> String {
        let now = clock.nowSinceEpoch
        let prefix = Self.slotPrefix(of: userKey(user))
        var slots: [Int: Record] = [:]
        for (id, record) in try rows(prefix: prefix, in: transaction) {
            if let slot = Int(id.dropFirst(prefix.count)) { slots[slot] = record }
        }
        // A cap lowered since these slots were taken: their sessions end.
        for (slot, record) in slots where slot >= maximumPerUser && record.isLive(at: now) {
            try end(record, at: Self.id(prefix, slot), in: transaction)
        }
        let chosen: Int
        if let free = (0..<maximumPerUser).first(where: { slots[$0]?.isLive(at: now) != true }) {
            chosen = free
        } else {
            // Every slot is live: the oldest sign-in ends.
            chosen = (0..<maximumPerUser).min { (slots[$0]?.serial ?? 0) < (slots[$1]?.serial ?? 0) } ?? 0
            if let oldest = slots[chosen] { transaction.closeSocketsAfterCommit(of: oldest.user) }
        }
        let secret = Self.newSecret()
        let record = Record(
            user: user,
            expiresAt: lifetime.map { WallClock.seconds(now + $0) },
            digest: Self.digest(of: secret),
            serial: (slots.values.compactMap(\.serial).max() ?? 0) + 1
        )
        try transaction.write(record, to: Self.resource, Self.id(prefix, chosen), checked: false)
        return Self.token(slot: Self.id(prefix, chosen), secret: secret)
    }

    /// ``issue(to:in:)`` in a transaction of its own on `server`.
    public func issue<Access>(to user: String, on server: SyncServer<Access>) async throws -> String {
        try await server.update { try issue(to: user, in: $0) }
    }

    // MARK: Checking

    /// The user whose live session `token` is, `nil` for an unknown, expired or ended one (or
    /// a string that is no token): one read of the store, outside any transaction, as an
    /// ``AccessPolicy/principal(for:)`` makes it on every request.
    ///
    /// - Throws: the store's error: the answer cannot be known now.
    public func user(forToken token: String) async throws -> String? {
        guard let (id, secret) = Self.slot(of: token) else { return nil }
        let (stored, _) = try await store.read(Self.resource.key(id), lastMutationIDOf: nil, scope: "")
        guard let stored, let record = try? KitJSON.decoder.decode(Record.self, from: stored.json) else { return nil }
        // Compared as digests: equal digests mean equal secrets, and the secret is not stored.
        guard record.digest == Self.digest(of: secret), record.isLive(at: clock.nowSinceEpoch) else { return nil }
        return record.user
    }

    /// The form in which the kit stores a token's secret: its SHA-256 digest, as 64 lowercase
    /// hexadecimal digits.
    ///
    /// For an app that also accepts tokens of its own under the same rule (a copy of the
    /// database signs no one in), such as tokens it issued before it used `Sessions`: it keeps
    /// `digest(of: token)` and compares digests, never tokens.
    public static func digest(of secret: String) -> String {
        SHA256.hex(secret.utf8)
    }

    /// The live sessions of `user`, oldest first.
    public func live(of user: String, in transaction: ServerTransaction) throws -> [LiveSession] {
        let now = clock.nowSinceEpoch
        return try rows(prefix: Self.slotPrefix(of: userKey(user)), in: transaction).values
            .filter { $0.isLive(at: now) }
            .sorted { ($0.serial ?? 0) < ($1.serial ?? 0) }
            .map { LiveSession(user: $0.user, expiresAt: $0.expiresAt.map { Date(timeIntervalSince1970: $0) }) }
    }

    /// A session that is accepted now, as ``live(of:in:)`` lists it.
    public struct LiveSession: Sendable, Hashable {
        /// Whose session it is, as it was issued.
        public let user: String
        /// When its token stops being accepted; `nil` when it has no lifetime.
        public let expiresAt: Date?
    }

    // MARK: Ending

    /// Ends every session of `user` when `transaction` commits, and then closes the user's push
    /// sockets: their clients reconnect, are refused, and learn that they are signed out.
    public func revoke(of user: String, in transaction: ServerTransaction) throws {
        let prefix = Self.slotPrefix(of: userKey(user))
        for (id, record) in try rows(prefix: prefix, in: transaction) {
            if record.digest != nil { try end(record, at: id, in: transaction) }
            // Every spelling its sessions were issued to, live or not: an expired session's
            // socket may not have been checked yet.
            transaction.closeSocketsAfterCommit(of: record.user)
        }
        transaction.closeSocketsAfterCommit(of: user)
    }

    /// Ends every session of every user when `transaction` commits, and then closes every push
    /// socket. Reads the sessions a page at a time, all in `transaction`.
    public func revokeAll(in transaction: ServerTransaction) throws {
        var cursor: String?
        while true {
            let page = try transaction.values(of: Self.resource, prefix: "", after: cursor, limit: 500)
            for (id, record) in page where !record.isEnded {
                try end(record, at: id, in: transaction)
            }
            guard let last = page.last, page.count == 500 else { break }
            cursor = last.id
        }
        for (id, record) in try transaction.written(of: Self.resource, prefix: "") where !record.isEnded {
            try end(record, at: id, in: transaction)
        }
        transaction.closeAllSocketsAfterCommit()
    }

    // MARK: Stored form

    /// A slot as stored. The names of its fields are the stored format: renaming one signs
    /// everyone out.
    struct Record: Codable, Sendable, Hashable {
        /// Whose session it is, as issued.
        var user: String
        /// When the token stops being accepted, in seconds since 1970; `nil` never. Zero once
        /// the session was ended.
        var expiresAt: Double?
        /// The SHA-256 digest of the token's secret, as hexadecimal digits; `nil` once the
        /// session was ended.
        var digest: String?
        /// The order of the user's sign-ins, so that the cap ends the oldest session (several
        /// sign-ins can share a second).
        var serial: UInt64?

        /// Whether the session is accepted at `now` (since 1970).
        func isLive(at now: Duration) -> Bool {
            digest != nil && expiresAt.map { WallClock.seconds(now) < $0 } ?? true
        }

        /// Whether the row was ended (by a revocation or the cap), rather than expired or live.
        /// A row of another form (no digest, not ended: an app's sessions from before these)
        /// is not accepted here, and ``Sessions/revokeAll(in:)`` ends it too.
        var isEnded: Bool {
            digest == nil && expiresAt == 0
        }
    }

    /// The user's rows, as stored and as written earlier in `transaction` (two sign-ins in one
    /// transaction take two slots), by id.
    private func rows(prefix: String, in transaction: ServerTransaction) throws -> [String: Record] {
        var rows: [String: Record] = [:]
        for (id, record) in try transaction.values(of: Self.resource, prefix: prefix, limit: Self.maximumPerUserLimit + 1) {
            rows[id] = record
        }
        for (id, record) in try transaction.written(of: Self.resource, prefix: prefix) {
            rows[id] = record
        }
        return rows
    }

    /// Ends the session in the slot `id`, whose user's sockets close after the commit.
    private func end(_ record: Record, at id: String, in transaction: ServerTransaction) throws {
        let ended = Record(user: record.user, expiresAt: 0, digest: nil, serial: record.serial)
        try transaction.write(ended, to: Self.resource, id, checked: false)
        transaction.closeSocketsAfterCommit(of: record.user)
    }

    /// The start of the ids of the slots of the user kept under `key`: 32 hexadecimal digits of
    /// its SHA-256 digest (128 bits: no two users share them), which is also how a token names
    /// its user.
    static func slotPrefix(of key: String) -> String {
        String(SHA256.hex(key.utf8).prefix(32)) + "/"
    }

    private static func id(_ prefix: String, _ slot: Int) -> String {
        prefix + (slot < 10 ? "0\(slot)" : "\(slot)")
    }

    /// A token: the slot's id without its slash, then the secret.
    private static func token(slot id: String, secret: String) -> String {
        String(id.filter { $0 != "/" }) + secret
    }

    /// The slot id and the secret `token` names; `nil` for a string of another form.
    private static func slot(of token: String) -> (id: String, secret: String)? {
        let utf8 = token.utf8
        guard utf8.count == 98, utf8.allSatisfy({ (48...57).contains($0) || (97...102).contains($0) }) else { return nil }
        let user = token.prefix(32)
        let slot = token.dropFirst(32).prefix(2)
        let secret = token.dropFirst(34)
        guard slot.allSatisfy(\.isNumber) else { return nil }
        return ("\(user)/\(slot)", String(secret))
    }

    /// A session's secret: 256 bits from the system's cryptographic generator (`getrandom` on
    /// Linux, which needs no file descriptor, so a server out of descriptors still issues no
    /// predictable token), as 64 hexadecimal digits.
    static func newSecret() -> String {
        var generator = SystemRandomNumberGenerator()
        return (0..<4).map { _ in
            let word = String(generator.next() as UInt64, radix: 16)
            return String(repeating: "0", count: 16 - word.count) + word
        }.joined()
    }
}
