/// A Nightride account: the name as it was first spelled, and its password's bcrypt hash.
/// Stored under the name's case-folded form, so that "Ann" and "ann" are one account.
struct Account: Codable, Sendable, Hashable {
    /// The user's name as created: what every value and answer calls the user.
    var name: String
    /// The bcrypt hash of the password the account was created with.
    var passwordHash: String
    /// The digests of the account's sessions from before sessions had slots of their own
    /// (``SessionsBeforeSlots``), which a revocation still ends; `nil` (and not stored)
    /// otherwise. No sign-in adds to it: the account record does not change with sessions.
    var sessions: [String]?

    /// An account with no session yet.
    init(name: String, passwordHash: String) {
        self.name = name
        self.passwordHash = passwordHash
    }
}
