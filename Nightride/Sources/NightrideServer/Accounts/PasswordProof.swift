/// What the server found out about a login's password before taking the core's lock.
///
/// Hashing and checking a password is slow on purpose (bcrypt), so it never runs under the lock
/// that every request and push shares. The server reads the stored hash, does the slow part
/// outside, and hands the core this proof; the core accepts it only if the stored hash is still
/// the one the proof was made against, so two first logins racing to set a password cannot
/// both win.
public enum PasswordProof: Sendable, Hashable {
    /// The login gave no password.
    case none
    /// The login's password matches `hash`, the user's stored hash.
    case matches(hash: String)
    /// The login gave a password and the user had none (or did not exist): `hash` is the new
    /// password's hash, to keep.
    case sets(hash: String)
}
