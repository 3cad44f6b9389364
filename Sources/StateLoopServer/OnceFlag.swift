import Synchronization

/// A flag raised once and read from anywhere: a `Sendable` box for an `Atomic<Bool>`, which
/// cannot be captured by the closures and child tasks that set and read it.
///
/// Used for: the application's graceful shutdown having begun (read by every new connection's
/// ``RequestHeadGuard``, which answers a connection accepted from then on with 503: NIO
/// delivers the quiescing event to such a connection before its handlers are in place, where
/// nothing hears it); and a push socket's client having left (see `SyncServer.serve`).
///
/// Threading: any thread; raising it is final.
final class OnceFlag: Sendable {
    private let flag = Atomic<Bool>(false)

    /// Whether the flag was raised.
    var isRaised: Bool {
        flag.load(ordering: .acquiring)
    }

    /// Raises the flag, for good.
    func raise() {
        flag.store(true, ordering: .releasing)
    }
}
