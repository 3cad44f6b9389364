import Foundation
import StateLoopServer

/// Nightride's sessions from before sessions had slots (the kit's ``Sessions`` since): a token
/// of 64 hexadecimal digits, kept in the same `session` resource under its SHA-256 digest, with
/// its user and expiry, and listed in the account's `sessions`. They are still accepted until
/// they expire or are revoked, so that a data file of that time keeps its users signed in;
/// none is issued any more. The kit's ``Sessions/revokeAll(in:)`` ends them with the rest.
enum SessionsBeforeSlots {
    /// Such a session as stored.
    struct Record: Codable, Sendable {
        /// Whose session it is: the account's name as created.
        var user: String
        /// When the token stops being accepted, in seconds since 1970 (zero once revoked);
        /// `nil` never.
        var expiresAt: Double?
        /// Set only in the kit's slots: such a row is not one of these.
        var digest: String?
    }

    static let resource = ServerResource("session", of: Record.self)

    /// The user whose live session `token` is at `now`, if it is a token of that form: one read
    /// of `store`, as the kit's check is; `nil` otherwise.
    static func user(forToken token: String, at now: Date, in store: any ServerStore) async throws -> String? {
        guard token.utf8.count == 64, token.utf8.allSatisfy({ (48...57).contains($0) || (97...102).contains($0) }) else { return nil }
        let (stored, _) = try await store.read(resource.key(Sessions.digest(of: token)), lastMutationIDOf: nil, scope: "")
        guard let stored, let record = try? JSONDecoder().decode(Record.self, from: stored.json), record.digest == nil else { return nil }
        return record.expiresAt.map { now.timeIntervalSince1970 < $0 } ?? true ? record.user : nil
    }

    /// Ends the sessions listed in the account `key`, and the list.
    static func revoke(account key: String, in transaction: ServerTransaction) throws {
        guard var account = try transaction.read(NightrideResources.account, key), let listed = account.sessions else { return }
        for digest in listed {
            try transaction.write(Record(user: account.name, expiresAt: 0), to: resource, digest)
        }
        account.sessions = nil
        try transaction.write(account, to: NightrideResources.account, key)
    }
}
