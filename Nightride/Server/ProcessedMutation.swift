/// One mutation the server processed for the first time: applied, or refused. Repeats of the
/// same id (a retry whose first answer was lost) are answered from memory and not listed, so
/// an id listed twice in one epoch would be a mutation applied twice.
public struct ProcessedMutation: Sendable, Hashable {
    /// Whose resource the mutation was for.
    public var user: String
    /// The client's mutation id (`<client>:<sequence>`).
    public var id: String
    /// The server's epoch when it processed the mutation. A restart forgets what was applied
    /// (an in-memory server), so the same id may be applied again in a later epoch.
    public var epoch: UInt64
    /// Whether it changed anything (`false`: refused).
    public var applied: Bool
}
