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
    /// every later value of the epoch look older; StateLoopSync's resources refuse such a version
    /// (`UnfollowableVersionError`).
    public var isFollowable: Bool {
        counter < .max
    }
}
