/// A server-assigned version: an epoch and a counter.
///
/// The server increments the counter on every change of a resource. It increments the epoch
/// when its history restarts (a restore from backup, a reset), so that a client can tell a
/// restarted history from an old answer: versions order by epoch first, then by counter.
public struct Version: Hashable, Comparable, Sendable, Codable, CustomStringConvertible {
    /// Which history of the server the counter belongs to.
    public var epoch: UInt64
    /// The change number within the epoch.
    public var counter: UInt64

    /// A version from its parts.
    public init(epoch: UInt64 = 0, counter: UInt64) {
        self.epoch = epoch
        self.counter = counter
    }

    public static func < (lhs: Version, rhs: Version) -> Bool {
        (lhs.epoch, lhs.counter) < (rhs.epoch, rhs.counter)
    }

    public var description: String {
        epoch == 0 ? "v\(counter)" : "e\(epoch)v\(counter)"
    }
}

/// A value as the server sent it, with its version.
public struct Versioned<Value: Sendable>: Sendable {
    /// The server's version of `value`.
    public var version: Version
    /// The value.
    public var value: Value

    /// A value with its version.
    public init(_ value: Value, version: Version) {
        self.value = value
        self.version = version
    }
}

extension Versioned: Equatable where Value: Equatable {}
extension Versioned: Hashable where Value: Hashable {}
extension Versioned: Codable where Value: Codable {}

/// What receiving a versioned value does to the one held.
public enum VersionOutcome: Sendable, Hashable {
    /// The value is newer (or the first): it replaces the one held.
    case applied
    /// The value is from a later epoch: it replaces the one held, whatever its counter.
    case rebootstrapped
    /// Same version as the one held: nothing changes, nothing is emitted.
    case duplicate
    /// Older than the one held: dropped.
    case outdated
}

extension Versioned {
    /// What receiving `incoming` does when `current` is held.
    public static func outcome(of incoming: Version, over current: Version?) -> VersionOutcome {
        guard let current else { return .applied }
        if incoming.epoch > current.epoch { return .rebootstrapped }
        if incoming == current { return .duplicate }
        return incoming > current ? .applied : .outdated
    }
}
