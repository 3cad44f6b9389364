import NightrideModel
import StateLoopServer

extension RideWorld {
    /// Signs in to the account `name` (already trimmed and composed) names, or creates it;
    /// returns the account's name as created. Touches the account and, for a new one, its own
    /// values only: never the dispatch book, whose row every ride operation locks first, so a
    /// sign-in never waits for the rides of anyone else (on PostgreSQL, across instances).
    ///
    /// `proof` says what the server established about the password (see ``PasswordProof``): an
    /// account is created only with `.sets` (no account without a password), with driver mode
    /// off, no ride and `history()` as its past rides, and signed in to only with `.matches` of
    /// its stored hash. Names are one account whatever their case: "Ann" signs in to "ann".
    ///
    /// - Throws: `invalidName` for a new name with invisible characters or letters of two
    ///   scripts (``AccountName/checkNewAccount(_:)``); `passwordRequired` for a new name
    ///   without a password; `wrongPassword` when the
    ///   proof does not fit the stored password (missing, wrong, or set by a concurrent login).
    mutating func signIn(name: String, proof: PasswordProof, history: (String) -> [Ride]) throws -> String {
        let key = AccountName.key(of: name)
        switch (try account(key), proof) {
        case (let account?, .matches(let hash)) where account.passwordHash == hash:
            return account.name
        case (nil, .sets(let hash)):
            // Only a new account's name meets the rules against look-alikes: older accounts
            // keep their names.
            try AccountName.checkNewAccount(name)
            try createAccount(Account(name: name, passwordHash: hash), key: key, history: history(name))
            return name
        case (nil, .none):
            throw RideRefusal(.passwordRequired, "a new account needs a password")
        default:
            throw RideRefusal(.wrongPassword, "wrong name or password")
        }
    }
}
