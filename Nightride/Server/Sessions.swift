import Foundation
import StateLoopServer
import StateLoopWire

/// Nightride's sessions in the store, each a row of its own: a user has at most
/// ``maximumSlots`` numbered slots, under `<account digest>/<slot>`, and a session lives in
/// one, as its token's SHA-256 digest with its user and expiry, never as the token itself, so a
/// copy of the database signs no one in.
///
/// The token names its slot: it is the account's digest, the slot's two digits, then 256 random
/// bits (the secret, whose digest the slot keeps). So a sign-in writes one small row, whatever
/// the number of sessions, and the account record never changes at a sign-in; a user's rows
/// are bounded by the cap (a sign-in takes a free or expired slot, else ends the oldest live
/// session in its), so neither the values nor the change feed grow with live sessions; and
/// revoking one user's sessions touches only that user's rows.
///
/// Tokens issued before slots (64 hexadecimal digits, kept under their digest, and listed in
/// the account's `sessions`) are still accepted until they expire or are revoked.
///
/// Times are seconds since 1970 on the server's clock, so sessions outlive a restart of the
/// process and end when their lifetime does.
enum Sessions {
    /// The most slots a user may have: a slot is two decimal digits in the token.
    static let maximumSlots = 99

    /// A session as stored.
    struct Record: Codable, Sendable, Hashable {
        /// Whose session it is: the account's name as created.
        var user: String
        /// When the token stops being accepted, in seconds since 1970; `nil` never.
        var expiresAt: Double?
        /// The digest of the token's secret, in a slot; `nil` once the slot's session ended,
        /// and in a session stored under its token's digest (before slots).
        var digest: String?
        /// The order of the account's sign-ins, so that the cap ends the oldest session
        /// (several sign-ins can share a second).
        var serial: UInt64?

        /// Whether the session is accepted at `now`.
        func isLive(at now: Double) -> Bool {
            expiresAt.map { now < $0 } ?? true
        }
    }

    static let resource = ServerResource("session", of: Record.self)

    /// What a sign-in's session came to: its token, and whether it ended another (the oldest)
    /// to stay within the cap, whose push sockets must then be closed.
    struct Issued: Sendable {
        let token: String
        let endedAnother: Bool
    }

    /// The key a token is kept under (before slots), or the digest a slot keeps of a secret.
    static func digest(of token: String) -> String {
        SHA256.hex(token.utf8)
    }

    /// The start of the ids of the account `key`'s slots: 32 hexadecimal digits of its digest
    /// (128 bits: no two accounts share it), which is also how a token names its account.
    static func slotPrefix(of key: String) -> String {
        String(digest(of: key).prefix(32)) + "/"
    }

    /// A new session of `user` (the account `key`) with the secret `secret`, live until
    /// `expiresAt`, in a free slot, one whose session has ended by `now`, or else the slot of
    /// the oldest live session, which ends. At most `cap` slots are used. The slots are read as
    /// stored: one sign-in a transaction, as the server makes them.
    static func issue(
        secret: String, to user: String, account key: String, expiresAt: Double?, at now: Double, cap: Int, in transaction: ServerTransaction
    ) throws -> Issued {
        let cap = min(max(1, cap), maximumSlots)
        let prefix = slotPrefix(of: key)
        var slots: [Int: Record] = [:]
        for (id, record) in try transaction.values(of: resource, prefix: prefix, limit: maximumSlots + 1) {
            if let slot = Int(id.dropFirst(prefix.count)) { slots[slot] = record }
        }
        var endedAnother = false
        // A cap lowered since these slots were taken: their sessions end.
        for (slot, record) in slots where slot >= cap && record.digest != nil && record.isLive(at: now) {
            try transaction.write(ended(record), to: resource, id(prefix, slot))
            endedAnother = true
        }
        let usable = (0..<cap).map { (slot: $0, record: slots[$0]) }
        let chosen: Int
        if let free = usable.first(where: { $0.record?.digest == nil || $0.record?.isLive(at: now) == false }) {
            chosen = free.slot
        } else {
            chosen = usable.min { ($0.record?.serial ?? 0) < ($1.record?.serial ?? 0) }?.slot ?? 0
            endedAnother = true
        }
        let serial = (slots.values.compactMap(\.serial).max() ?? 0) + 1
        try transaction.write(Record(user: user, expiresAt: expiresAt, digest: digest(of: secret), serial: serial), to: resource, id(prefix, chosen))
        return Issued(token: token(prefix: prefix, slot: chosen, secret: secret), endedAnother: endedAnother)
    }

    /// Ends every session of the account `key` at once.
    static func revoke(account key: String, in transaction: ServerTransaction) throws {
        let prefix = slotPrefix(of: key)
        for (id, record) in try transaction.values(of: resource, prefix: prefix, limit: maximumSlots + 1) where record.digest != nil {
            try transaction.write(ended(record), to: resource, id)
        }
        // Sessions from before slots, listed in the account.
        guard var account = try transaction.read(NightrideResources.account, key), let listed = account.sessions else { return }
        for digest in listed {
            try transaction.write(Record(user: account.name, expiresAt: 0), to: resource, digest)
        }
        account.sessions = nil
        try transaction.write(account, to: NightrideResources.account, key)
    }

    /// Ends every session of every account, a page of accounts at a time.
    static func revokeAll(in transaction: ServerTransaction) throws {
        var cursor: String?
        while true {
            let page = try transaction.values(of: NightrideResources.account, prefix: "", after: cursor, limit: 500)
            for (key, _) in page { try revoke(account: key, in: transaction) }
            guard let last = page.last, page.count == 500 else { return }
            cursor = last.id
        }
    }

    /// The live sessions of the account `key` at `now`, oldest first.
    static func live(account key: String, at now: Double, in transaction: ServerTransaction) throws -> [Record] {
        try transaction.values(of: resource, prefix: slotPrefix(of: key), limit: maximumSlots + 1).map(\.value)
            .filter { $0.digest != nil && $0.isLive(at: now) }
            .sorted { ($0.serial ?? 0) < ($1.serial ?? 0) }
    }

    /// The user whose live session `token` is at `now`, read from `store` without a
    /// transaction; `nil` for an unknown, expired or revoked token.
    static func user(forToken token: String, at now: Double, in store: any ServerStore) async throws -> String? {
        let record: Record?
        if let (id, secret) = slot(of: token) {
            record = try await read(id, from: store).flatMap { stored in
                // Compared as digests: equal digests mean equal secrets.
                stored.digest == digest(of: secret) ? stored : nil
            }
        } else {
            // A token from before slots, under its digest (a slot's id never is one).
            record = try await read(digest(of: token), from: store).flatMap { $0.digest == nil ? $0 : nil }
        }
        guard let record, record.isLive(at: now) else { return nil }
        return record.user
    }

    // MARK: Helpers

    private static func id(_ prefix: String, _ slot: Int) -> String {
        prefix + (slot < 10 ? "0\(slot)" : "\(slot)")
    }

    /// A slotted token: the account's 32 digits, the slot's 2, the secret's 64.
    private static func token(prefix: String, slot: Int, secret: String) -> String {
        String(id(prefix, slot).filter { $0 != "/" }) + secret
    }

    /// The slot id and the secret a token names; `nil` for a token of another form.
    private static func slot(of token: String) -> (id: String, secret: String)? {
        let hex = Set("0123456789abcdef")
        guard token.count == 98, token.allSatisfy({ hex.contains($0) }) else { return nil }
        let account = token.prefix(32), slot = token.dropFirst(32).prefix(2), secret = token.dropFirst(34)
        guard slot.allSatisfy(\.isNumber) else { return nil }
        return ("\(account)/\(slot)", String(secret))
    }

    private static func ended(_ record: Record) -> Record {
        Record(user: record.user, expiresAt: 0, digest: nil, serial: record.serial)
    }

    private static func read(_ id: String, from store: any ServerStore) async throws -> Record? {
        let (stored, _) = try await store.read(resource.key(id), lastMutationIDOf: nil, scope: "")
        return try stored.map { try JSON.decoder.decode(Record.self, from: $0.json) }
    }
}
