import Synchronization

/// Counts attempts per key in a sliding window and says when the next one must wait: for the
/// routes a backend guards itself, such as a login's failures per name and per address.
///
/// ```swift
/// let failures = AttemptLimiter(limit: 5, per: .seconds(60))
/// if let wait = failures.wait(for: name, at: now) { return tooManyAttempts(retryAfter: wait) }
/// …
/// if wrongPassword { failures.record(name, at: now) }
/// ```
///
/// Time is whatever `Duration` since an origin the caller uses (a server's clock), so tests
/// drive it by hand. Memory is bounded: a key whose attempts have all left the window is
/// forgotten, and at `maximumKeys` the oldest keys go first.
public final class AttemptLimiter: Sendable {
    /// How many attempts a key may make within ``window``.
    public let limit: Int
    /// The window the attempts are counted in.
    public let window: Duration
    private let maximumKeys: Int
    private let attempts = Mutex<[String: [Duration]]>([:])

    /// A limiter of `limit` attempts per key within `window`, keeping at most `maximumKeys` keys.
    public init(limit: Int, per window: Duration, maximumKeys: Int = 100_000) {
        self.limit = max(1, limit)
        self.window = window
        self.maximumKeys = max(1, maximumKeys)
    }

    /// How long `key` must wait before its next attempt at `now`; `nil` when it may go ahead.
    public func wait(for key: String, at now: Duration) -> Duration? {
        attempts.withLock { attempts in
            guard let times = attempts[key]?.filter({ now - $0 < window }), times.count >= limit else { return nil }
            return max(.zero, times[times.count - limit] + window - now)
        }
    }

    /// Records an attempt of `key` at `now`.
    public func record(_ key: String, at now: Duration) {
        attempts.withLock { attempts in
            var times = (attempts[key] ?? []).filter { now - $0 < window }
            times.append(now)
            attempts[key] = Array(times.suffix(limit))
            if attempts.count > maximumKeys {
                Self.forget(in: &attempts, before: now - window, keeping: maximumKeys)
            }
        }
    }

    /// Drops the keys with no attempt left in the window, then, if still too many, the keys
    /// whose newest attempt is oldest.
    private static func forget(in attempts: inout [String: [Duration]], before cutoff: Duration, keeping maximum: Int) {
        attempts = attempts.filter { ($0.value.last ?? cutoff) > cutoff }
        guard attempts.count > maximum else { return }
        let newestFirst = attempts.sorted { ($0.value.last ?? .zero) > ($1.value.last ?? .zero) }
        attempts = Dictionary(uniqueKeysWithValues: newestFirst.prefix(maximum).map { ($0.key, $0.value) })
    }

    /// How many keys are remembered now.
    public var keyCount: Int {
        attempts.withLock { $0.count }
    }
}
