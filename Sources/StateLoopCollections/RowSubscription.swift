import StateLoopSync
import StateLoopWire

/// One subscription of a local collection to a query, synced from its source into the store
/// until stopped. Made by ``LocalCollection/subscribe(_:)``.
///
/// Its socket opens with the cookie the store holds, so that its first message catches up from
/// there, however long the app was away; a message it cannot place has it open again from the
/// cookie held; a query that refuses the reader takes its rows off the device, and access coming
/// back brings them back.
///
/// Subscriptions to the same query (the same source key) share one socket and one cookie: the
/// collection syncs the query while any of them runs. Releasing one stops it, as ``stop()`` does.
public final class RowSubscription: Sendable {
    /// Where the subscription stands.
    public enum Status: Sendable, Hashable {
        /// No socket open: connecting, or the server away.
        case connecting
        /// A socket open, its messages applied as they come.
        case live
        /// The query refuses the reader: the subscription holds no rows.
        case refused
    }

    /// The subscription's key, as its source names it.
    public let key: String
    private let runner: SubscriptionRunner
    /// Whether this one let go of the shared runner already.
    private let released = Locked(false)
    /// Lets go of the runner; `true` when no other subscription to the key runs.
    private let release: @Sendable () -> Bool
    private let forget: @Sendable () throws -> Void

    init(runner: SubscriptionRunner, release: @escaping @Sendable () -> Bool, forget: @escaping @Sendable () throws -> Void) {
        key = runner.key
        self.runner = runner
        self.release = release
        self.forget = forget
    }

    /// Where the subscription stands now.
    public var status: Status {
        runner.status
    }

    /// Stops this subscription; the query stays synced while another subscription to it runs.
    /// The rows stay in the store (shown, and caught up from the cookie by the next
    /// subscription to the same query). While another subscription of the collection runs, a
    /// change of the app stays on top until that one's rows contain it, no longer until these
    /// rows do (they no longer follow the server).
    public func stop() {
        _ = letGo()
    }

    /// Stops this subscription and, when no other subscription to the query runs, takes its rows
    /// off the device, but those another query's subscription holds.
    public func end() throws {
        _ = letGo()
        // The collection keeps the rows while a subscription to the key runs, whichever it is:
        // ending one already stopped still takes its rows off.
        try forget()
    }

    deinit {
        _ = letGo()
    }

    /// Lets go of the runner once; whether no other subscription to the key runs.
    private func letGo() -> Bool {
        let first = released.withLock { released in
            defer { released = true }
            return !released
        }
        return first ? release() : false
    }
}
