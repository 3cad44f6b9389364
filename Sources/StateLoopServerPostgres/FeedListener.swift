import Logging
import NIOCore
import NIOPosix
import PostgresNIO

/// Listens for the change feed's notifications on a connection of its own and asks the
/// ``FeedFollower`` to catch up on each: how a commit on one instance reaches the others.
///
/// A notification carries nothing but the news (the follower reads the rows), so one lost
/// costs nothing that the next catch-up does not recover. Notifications are lost while the
/// connection is down; once it is listening again it asks for a catch-up before any
/// notification, which reads everything committed meanwhile. Every `checkInterval` it asks for
/// a catch-up anyway (one that failed is retried so) and checks that the connection still
/// answers: a connection that died without a word (a NAT's timeout, a database's failover) is
/// closed and opened again. It reconnects by itself, waiting a little longer after each failure
/// (up to `longestWait`).
///
/// It is one task for the store's life, whatever the number of sockets.
final class FeedListener: Sendable {
    private let task: Task<Void, Never>

    /// Starts listening with `configuration`.
    init(
        configuration: PostgresConnection.Configuration, follower: FeedFollower, ownInstance: String, deadline: Duration, logger: Logger,
        checkInterval: Duration = .seconds(5), longestWait: Duration = .seconds(2)
    ) {
        task = Task {
            var wait = Duration.milliseconds(50)
            while !Task.isCancelled {
                do {
                    let connection = try await PostgresConnection.connect(
                        on: MultiThreadedEventLoopGroup.singleton.any(), configuration: configuration, id: 1, logger: logger
                    ).get()
                    do {
                        try await connection.listen(on: FeedEntries.channel) { notifications in
                            wait = .milliseconds(50)
                            follower.catchUpSoon()
                            try await withThrowingTaskGroup(of: Void.self) { group in
                                group.addTask {
                                    // Its own store's commits reach the follower without a read.
                                    for try await notification in notifications where notification.payload != ownInstance {
                                        follower.catchUpSoon()
                                    }
                                }
                                group.addTask {
                                    while true {
                                        try await Task.sleep(for: checkInterval)
                                        follower.catchUpSoon()
                                        _ = try await Deadline.race(deadline) { try await connection.query("SELECT 1", logger: logger) }
                                    }
                                }
                                // Either ends only by failing: the connection is closed and opened again.
                                try await group.next()
                                group.cancelAll()
                            }
                        }
                    } catch {
                        if !Task.isCancelled {
                            logger.warning(
                                "listening for the change feed stopped; listening again", metadata: ["error": "\(String(reflecting: error))"])
                        }
                    }
                    try? await connection.close()
                } catch {
                    if !Task.isCancelled { logger.warning("cannot listen for the change feed", metadata: ["error": "\(String(reflecting: error))"]) }
                }
                try? await Task.sleep(for: wait)
                wait = min(wait * 2, longestWait)
            }
        }
    }

    /// Stops listening.
    func stop() {
        task.cancel()
    }
}
