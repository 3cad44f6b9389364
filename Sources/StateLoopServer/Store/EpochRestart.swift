/// A new epoch a store began by itself as it opened, because it found that its data's history
/// went back (a restored backup, a point-in-time recovery): the counters after the restored
/// ones were handed out before, perhaps with other values, so the store could not go on in the
/// old epoch without giving one version to two values. The new epoch makes clients drop what
/// they hold and take the restored values.
///
/// Read it from ``ServerStore/epochRestart``; the store also logs it when it happens.
public struct EpochRestart: Sendable, Equatable, CustomStringConvertible {
    /// What told the store that its history went back.
    public enum Reason: Sendable, Equatable {
        /// The data's change feed ends at `position`, before the position `mark` that the
        /// store's high-water mark says it had reached (SQLite: the file was replaced by an
        /// older copy).
        case feedBehindMark(position: UInt64, mark: UInt64)
        /// The feed entry at the high-water mark's position is not the one the mark
        /// recorded: the data went back and other commits were made on it since, by something
        /// that did not keep the mark.
        case feedDiverged(position: UInt64)
        /// The data's epoch is older than the one the high-water mark was written in: the
        /// data was replaced by a copy from before a new epoch.
        case epochBehindMark(epoch: UInt64, mark: UInt64)
        /// The high-water mark exists but cannot be read (a torn or foreign file): the store
        /// cannot tell how far its history went, so it assumes the worst.
        case unreadableMark
        /// The database is not the one the epoch was started in (PostgreSQL: a dump restored
        /// into a new database or cluster, a point-in-time recovery or a failover, which start
        /// a new timeline). `changed` names what differs.
        case databaseReplaced(changed: [String])
    }

    /// The epoch the data held when the store opened it.
    public let previousEpoch: UInt64
    /// The epoch the store began: later than the data's and than any the mark recorded.
    public let epoch: UInt64
    /// Why the store began it.
    public let reason: Reason

    /// An epoch restart from its parts.
    public init(previousEpoch: UInt64, epoch: UInt64, reason: Reason) {
        self.previousEpoch = previousEpoch
        self.epoch = epoch
        self.reason = reason
    }

    /// The restart in words, for a log.
    public var description: String {
        let why =
            switch reason {
            case .feedBehindMark(let position, let mark):
                "the change feed ends at position \(position), before the high-water mark's \(mark): the data was replaced by an older copy"
            case .feedDiverged(let position):
                "the change feed's entry at position \(position) is not the one the high-water mark recorded: the data went back and was written since"
            case .epochBehindMark(let epoch, let mark):
                "the data's epoch \(epoch) is older than the high-water mark's \(mark): the data was replaced by a copy from before a new epoch"
            case .unreadableMark:
                "the high-water mark cannot be read, so how far the history went is unknown"
            case .databaseReplaced(let changed):
                "the database is not the one the epoch began in (changed: \(changed.joined(separator: ", ")))"
            }
        return "new epoch \(epoch) (was \(previousEpoch)): \(why)"
    }
}
