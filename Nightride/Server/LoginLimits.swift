import StateLoopServer

/// Failed sign-ins counted per account (whatever the name's case) and per address: past either limit, a login waits before
/// any password is checked, so guessing costs the guesser time and the server no hashing.
/// Only failures count: users who know their password sign in as often as they like.
struct LoginLimits: Sendable {
    let perName: AttemptLimiter
    let perAddress: AttemptLimiter

    init(_ limits: NightrideServer.Configuration.LoginLimits) {
        perName = AttemptLimiter(limit: limits.failuresPerName, per: limits.window)
        perAddress = AttemptLimiter(limit: limits.failuresPerAddress, per: limits.window)
    }

    /// How long a login of `name` from `peer` must wait at `now`; `nil` when it may go ahead.
    func wait(name: String, peer: String, at now: Duration) -> Duration? {
        [perName.wait(for: AccountName.key(ofLogin: name), at: now), perAddress.wait(for: peer, at: now)].compactMap { $0 }.max()
    }

    func recordFailure(name: String, peer: String, at now: Duration) {
        perName.record(AccountName.key(ofLogin: name), at: now)
        perAddress.record(peer, at: now)
    }
}
