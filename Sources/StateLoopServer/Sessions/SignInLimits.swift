/// What holds sign-ins back, for a backend's own sign-in route: every limit is checked before
/// any password is, so an attempt held back costs the server no hashing. Time is the caller's
/// (a server's clock as a `Duration` since an origin), as for ``AttemptLimiter``.
///
/// Failures are counted per name and address together, so that guessing from one address is
/// slow (5 a minute, then 20 an hour, by default) while the owner, signing in from an address
/// that has not been failing at the name, is let through: no stranger can lock anyone out. Two
/// wider counts only narrow what failing addresses may do:
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
///
/// ```swift
/// let limits = SignInLimits()
/// if let wait = limits.wait(account: name, peer: context.peer, at: now) { return tooManyAttempts(wait) }
/// if passwordIsWrong { limits.recordFailure(account: name, peer: context.peer, at: now) }
/// else { limits.recordSuccess(account: name, peer: context.peer, at: now) }
/// ```
public final class SignInLimits: Sendable {

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

    /// Limits as `limits` says; the defaults if none.
    public init(_ limits: Policy = Policy()) {
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
    public func wait(account key: String, peer: String, at now: Duration) -> Duration? {
        let pair = Self.pair(key, peer)
        var waits = [
            failuresPerPair.wait(for: pair, at: now), failuresPerPairLonger.wait(for: pair, at: now), successesPerName.wait(for: key, at: now),
        ]
        if failuresPerName.wait(for: key, at: now) != nil {
            waits.append(failedLatelyPerPair.wait(for: pair, at: now))
        }
        if failuresPerAddress.wait(for: peer, at: now) != nil, knownPairs.wait(for: pair, at: now) == nil {
            waits.append(failuresPerAddress.wait(for: peer, at: now))
        }
        return waits.compactMap { $0 }.max()
    }

    /// How long a sign-up from `peer` must wait at `now`; `nil` when it may go ahead.
    public func signUpWait(peer: String, at now: Duration) -> Duration? {
        signUpsPerAddress.wait(for: peer, at: now)
    }

    /// Counts a sign-up about to be tried (its password about to be hashed).
    public func recordSignUp(peer: String, at now: Duration) {
        signUpsPerAddress.record(peer, at: now)
    }

    /// Counts a wrong or missing password for the account `key` from `peer`.
    public func recordFailure(account key: String, peer: String, at now: Duration) {
        let pair = Self.pair(key, peer)
        failuresPerPair.record(pair, at: now)
        failuresPerPairLonger.record(pair, at: now)
        failedLatelyPerPair.record(pair, at: now)
        failuresPerName.record(key, at: now)
        failuresPerAddress.record(peer, at: now)
    }

    /// Counts a successful sign-in, and remembers that the name signs in from `peer`.
    public func recordSuccess(account key: String, peer: String, at now: Duration) {
        successesPerName.record(key, at: now)
        knownPairs.record(Self.pair(key, peer), at: now)
    }

    /// The numbers of ``SignInLimits``: so that guessing is slow, no stranger can lock an owner
    /// out, and no one can make accounts or sessions by the thousand.
    public struct Policy: Sendable {
        /// Failures of one name from one address within ``window`` before that pair waits.
        public var failuresPerPair: Int
        /// Failures of one name from one address within ``backoffWindow``: the longer wait
        /// of a pair that keeps guessing after its short waits.
        public var failuresPerPairLonger: Int
        /// Failures of one name from every address within ``window`` past which the name is
        /// under attack: then an address that failed at it once in the window waits for the
        /// window to pass. An address that has not failed at the name is never held back.
        public var failuresPerName: Int
        /// Failures from one address within ``window`` past which the address may sign in
        /// only to the names that recently signed in from it (see ``knownPairLifetime``):
        /// users behind the same address (a NAT) who had signed in are not held back.
        public var failuresPerAddress: Int
        /// Successful sign-ins of one name within ``window``: each makes a session, which is
        /// stored, so even the owner is held back past it.
        public var successesPerName: Int
        /// New accounts one address may try to make within ``signUpWindow``.
        public var signUpsPerAddress: Int
        /// The sliding window of most counts.
        public var window: Duration
        /// The window of ``failuresPerPairLonger``.
        public var backoffWindow: Duration
        /// The window of ``signUpsPerAddress``.
        public var signUpWindow: Duration
        /// How long a name that signed in from an address stays known there, so that the
        /// address's own limit does not hold it back.
        public var knownPairLifetime: Duration

        /// Limits; the defaults allow 5 failures per name and address a minute (20 an hour),
        /// 100 a minute per name before it is under attack, 50 a minute per address, 30
        /// sign-ins a minute per name, and 5 sign-ups an hour per address.
        public init(
            failuresPerPair: Int = 5,
            failuresPerPairLonger: Int = 20,
            failuresPerName: Int = 100,
            failuresPerAddress: Int = 50,
            successesPerName: Int = 30,
            signUpsPerAddress: Int = 5,
            window: Duration = .seconds(60),
            backoffWindow: Duration = .seconds(3_600),
            signUpWindow: Duration = .seconds(3_600),
            knownPairLifetime: Duration = .seconds(24 * 3_600)
        ) {
            self.failuresPerPair = failuresPerPair
            self.failuresPerPairLonger = failuresPerPairLonger
            self.failuresPerName = failuresPerName
            self.failuresPerAddress = failuresPerAddress
            self.successesPerName = successesPerName
            self.signUpsPerAddress = signUpsPerAddress
            self.window = window
            self.backoffWindow = backoffWindow
            self.signUpWindow = signUpWindow
            self.knownPairLifetime = knownPairLifetime
        }

        /// The defaults with sign-ups and sign-ins unbounded in practice: for tests, demos and
        /// load runs whose scripted clients sign up by the hundred from one loopback address.
        /// Failures are limited as by default.
        public static var scriptedClients: Policy {
            Policy(successesPerName: 1_000_000, signUpsPerAddress: 1_000_000)
        }
    }
}
