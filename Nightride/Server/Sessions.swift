import Foundation
import StateLoopServer
import StateLoopWire

/// Nightride's sessions in the store: each token is kept as its SHA-256 digest with its user and
/// expiry, never as itself, so a copy of the database signs no one in; each account lists the
/// digests of its live sessions, so that revoking one user's touches no one else's.
///
/// Times are seconds since 1970 on the server's clock, so sessions outlive a restart of the
/// process and end when their lifetime does.
enum Sessions {
    /// A session as stored, under its token's digest.
    struct Record: Codable, Sendable, Hashable {
        /// Whose session it is: the account's name as created.
        var user: String
        /// When the token stops being accepted, in seconds since 1970; `nil` never.
        var expiresAt: Double?

        /// Whether the session is accepted at `now`.
        func isLive(at now: Double) -> Bool {
            expiresAt.map { now < $0 } ?? true
        }
    }

    static let resource = ServerResource("session", of: Record.self)

    /// The key a token is kept under.
    static func digest(of token: String) -> String {
        SHA256.hex(token.utf8)
    }

    /// Records a new session of `user` (the account `key`) for `token`, live until `expiresAt`,
    /// and drops the account's sessions that have ended by `now`.
    static func issue(_ token: String, to user: String, account key: String, expiresAt: Double?, at now: Double, in transaction: ServerTransaction) throws {
        guard var account = try transaction.read(NightrideResources.account, key) else { return }
        let digest = digest(of: token)
        try transaction.write(Record(user: user, expiresAt: expiresAt), to: resource, digest)
        account.sessions = try account.sessions.filter { existing in
            try transaction.read(resource, existing)?.isLive(at: now) == true
        } + [digest]
        try transaction.write(account, to: NightrideResources.account, key)
    }

    /// Ends every session of the account `key` at once.
    static func revoke(account key: String, in transaction: ServerTransaction) throws {
        guard var account = try transaction.read(NightrideResources.account, key) else { return }
        for digest in account.sessions {
            try transaction.write(Record(user: account.name, expiresAt: 0), to: resource, digest)
        }
        account.sessions = []
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

    /// The user whose live session `token` is at `now`, read from `store` without a
    /// transaction; `nil` for an unknown, expired or revoked token.
    static func user(forToken token: String, at now: Double, in store: any ServerStore) async throws -> String? {
        let (stored, _) = try await store.read(resource.key(digest(of: token)), lastMutationIDOf: nil, scope: "")
        guard let stored else { return nil }
        let record = try JSON.decoder.decode(Record.self, from: stored.json)
        return record.isLive(at: now) ? record.user : nil
    }
}
