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

    /// Whether a later version can exist in the same epoch. A counter at its maximum would make
    /// every later value of the epoch look older; resources refuse such a version
    /// (``UnfollowableVersionError``).
    public var isFollowable: Bool {
        counter < .max
    }
}

/// A value as the server sent it, with its version.
///
/// On the wire: `{"version": {"epoch": 1, "counter": 8}, "value": …, "lastMutationID": 12}`,
/// where `lastMutationID` is optional (see ``lastMutationID``).
public struct Versioned<Value: Sendable>: Sendable {
    /// The server's version of `value`.
    public var version: Version
    /// The value.
    public var value: Value
    /// The sequence number of the newest mutation the server has processed (applied or
    /// rejected) for the client that reads this value, as told by the server; `nil` when the
    /// server does not say. Every mutation of that client up to it is contained in `value`, so
    /// an ``OptimisticResource`` stops showing them on top, even when their answers were lost.
    public var lastMutationID: UInt64?

    /// A value with its version, and the reader's last mutation id if the server gave one.
    public init(_ value: Value, version: Version, lastMutationID: UInt64? = nil) {
        self.value = value
        self.version = version
        self.lastMutationID = lastMutationID
    }
}

extension Versioned: Equatable where Value: Equatable {}
extension Versioned: Hashable where Value: Hashable {}
extension Versioned: Codable where Value: Codable {}

extension Versioned {
    /// Takes `repeated`'s `lastMutationID` when it is newer: a repeat of the held version brings
    /// nothing else, but the server may have processed more of the reader's mutations since.
    mutating func adoptLastMutationID(of repeated: Versioned) {
        if let newer = repeated.lastMutationID, newer > lastMutationID ?? 0 {
            lastMutationID = newer
        }
    }
}

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
