/// How the device stands with the server, for the status line: read by the session from the
/// client every so often, as the library offers no stream of it.
public struct SyncInfo: Sendable, Hashable {
    /// Where one subscription stands (the library's `RowSubscription.Status`, mirrored so that
    /// the core needs nothing of the client).
    public enum Connection: Sendable, Hashable {
        /// No socket open: connecting, or the server away.
        case connecting
        /// Up to date, changes arriving as they are made.
        case live
        /// The server refuses the query.
        case refused
    }

    /// The client's subscriptions (memberships, tasks); empty when it syncs nothing.
    public var connections: [Connection]
    /// How many of the user's changes the server has not confirmed yet.
    public var pending: Int

    /// The standing from its parts.
    public init(connections: [Connection] = [], pending: Int = 0) {
        self.connections = connections
        self.pending = pending
    }

    /// One word for all the subscriptions: the worst of them.
    public var summary: String {
        if connections.isEmpty { return "off" }
        if connections.contains(.refused) { return "refused" }
        if connections.contains(.connecting) { return "connecting" }
        return "live"
    }
}
