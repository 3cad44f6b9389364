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
    /// refused) for the client that reads this value, as told by the server; `nil` when the
    /// server does not say. Every mutation of that client up to it is contained in `value`, so
    /// an `OptimisticResource` stops showing them on top, even when their answers were lost.
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
