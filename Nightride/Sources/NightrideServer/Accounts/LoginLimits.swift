import StateLoopServer

/// What holds sign-ins back, all checked before any password is (so a held-back attempt costs
/// the server no bcrypt), in the time of the server's clock.
///
/// Failures are counted per name and address together, so that guessing from one address is
/// slow (5 a minute, then 20 an hour) while the owner, signing in from an address that has not
/// been failing at the name, is let through: no stranger can lock anyone out. Two wider counts
/// only narrow what failing addresses may do:
///
/// - a name with many failures from everywhere (a distributed guess) is under attack: an
///   address that failed at it in the window waits the window out, one guess per address,
///   while an address with no failure at it still goes ahead;
/// - an address with many failures (one guessing at many names) may still sign in to the
///   names that signed in from it recently, so the users behind one NAT are not held back
///   for one of them, but tries no new name until the window passes.
///
/// Sign-ups are counted per address (each costs a hash and makes stored rows), and successful
/// sign-ins per name (each makes a stored session).
struct LoginLimits: Sendable {
    private let failuresPerPair: AttemptLimiter
    private let failuresPerPairLonger: AttemptLimiter
    /// One failure per pair in the window: the pair's limit while its name is under attack.
    private let failedLatelyPerPair: AttemptLimiter
    private let failuresPerName: AttemptLimiter
    private let failuresPerAddress: AttemptLimiter
    private let successesPerName: AttemptLimiter
    private let signUpsPerAddress: AttemptLimiter
    /// The pairs that signed in within the known-pair lifetime: a limiter of one attempt, whose
    /// wait is non-nil exactly while the pair's last success is that recent.
    private let knownPairs: AttemptLimiter

    init(_ limits: NightrideServer.Configuration.LoginLimits) {
        failuresPerPair = AttemptLimiter(limit: limits.failuresPerPair, per: limits.window)
        failuresPerPairLonger = AttemptLimiter(limit: limits.failuresPerPairLonger, per: limits.backoffWindow)
        failedLatelyPerPair = AttemptLimiter(limit: 1, per: limits.window)
        failuresPerName = AttemptLimiter(limit: limits.failuresPerName, per: limits.window)
        failuresPerAddress = AttemptLimiter(limit: limits.failuresPerAddress, per: limits.window)
        successesPerName = AttemptLimiter(limit: limits.successesPerName, per: limits.window)
        signUpsPerAddress = AttemptLimiter(limit: limits.signUpsPerAddress, per: limits.signUpWindow)
        knownPairs = AttemptLimiter(limit: 1, per: limits.knownPairLifetime)
    }

    /// The key of a name (an account key) with an address. The address comes first and cannot
    /// hold a space, so the first space ends it and two pairs never share a key.
    private static func pair(_ account: String, _ peer: String) -> String {
        "\(peer) \(account)"
    }

    /// How long a sign-in to the account `key` from `peer` must wait at `now`; `nil` when it
    /// may go ahead.
    func wait(account key: String, peer: String, at now: Duration) -> Duration? {
        let pair = Self.pair(key, peer)
        var waits = [failuresPerPair.wait(for: pair, at: now), failuresPerPairLonger.wait(for: pair, at: now), successesPerName.wait(for: key, at: now)]
        if failuresPerName.wait(for: key, at: now) != nil {
            waits.append(failedLatelyPerPair.wait(for: pair, at: now))
        }
        if failuresPerAddress.wait(for: peer, at: now) != nil, knownPairs.wait(for: pair, at: now) == nil {
            waits.append(failuresPerAddress.wait(for: peer, at: now))
        }
        return waits.compactMap { $0 }.max()
    }

    /// How long a sign-up from `peer` must wait at `now`; `nil` when it may go ahead.
    func signUpWait(peer: String, at now: Duration) -> Duration? {
        signUpsPerAddress.wait(for: peer, at: now)
    }

    /// Counts a sign-up about to be tried (its password about to be hashed).
    func recordSignUp(peer: String, at now: Duration) {
        signUpsPerAddress.record(peer, at: now)
    }

    /// Counts a wrong or missing password for the account `key` from `peer`.
    func recordFailure(account key: String, peer: String, at now: Duration) {
        let pair = Self.pair(key, peer)
        failuresPerPair.record(pair, at: now)
        failuresPerPairLonger.record(pair, at: now)
        failedLatelyPerPair.record(pair, at: now)
        failuresPerName.record(key, at: now)
        failuresPerAddress.record(peer, at: now)
    }

    /// Counts a successful sign-in, and remembers that the name signs in from `peer`.
    func recordSuccess(account key: String, peer: String, at now: Duration) {
        successesPerName.record(key, at: now)
        knownPairs.record(Self.pair(key, peer), at: now)
    }
}
