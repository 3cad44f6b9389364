/// Counters of a running server, for demos and tests to watch the traffic.
public struct ServerStats: Sendable, Hashable {
    /// Requests received per route, as `"GET /me/ride"` (a route's pattern, never the path
    /// asked); WebSocket upgrades count under their route's path, and every request that matches
    /// no route under the one key `"unmatched"`, so that arbitrary paths cannot grow this table.
    public var requests: [String: Int] = [:]
    /// Push sockets connected now.
    public var openSockets = 0
    /// Push messages handed to sockets.
    public var pushesSent = 0
    /// Push messages dropped by the fault plan.
    public var pushesDropped = 0
    /// Push sockets cut by the fault plan.
    public var forcedDisconnects = 0
    /// Requests answered 503 by the fault plan.
    public var injectedFailures = 0
    /// Mutations applied whose answer the fault plan replaced with a 503, as if it were lost.
    public var lostAnswers = 0
    /// `{"changed": true}` hints the fault plan added to pushes.
    public var extraHints = 0
}

extension ServerStats {
    /// The counts of several instances of one backend, added up.
    public static func total(of instances: [ServerStats]) -> ServerStats {
        var total = ServerStats()
        for stats in instances {
            total.requests.merge(stats.requests, uniquingKeysWith: +)
            total.openSockets += stats.openSockets
            total.pushesSent += stats.pushesSent
            total.pushesDropped += stats.pushesDropped
            total.forcedDisconnects += stats.forcedDisconnects
            total.injectedFailures += stats.injectedFailures
            total.lostAnswers += stats.lostAnswers
            total.extraHints += stats.extraHints
        }
        return total
    }
}
