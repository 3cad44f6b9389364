import Synchronization

/// The messages waiting for one page's socket, bounded by their count and by their bytes: a
/// page that stops reading costs the inspector at most ``InspectorHub/pageOutboxBytes`` (its
/// first copy of the records alone can be hundreds of megabytes), then it is closed and
/// reconnects to a fresh copy.
///
/// Threading: the hub offers under its lock; the page's socket task takes messages from
/// ``messages`` and says when each is written.
final class PageOutbox: Sendable {
    /// What the page's socket writes out, in order.
    let messages: AsyncStream<String>
    private let continuation: AsyncStream<String>.Continuation
    private let waitingBytes = Mutex(0)
    private let byteLimit: Int

    /// An empty outbox holding at most `messageLimit` messages and `byteLimit` bytes.
    init(messageLimit: Int, byteLimit: Int) {
        (messages, continuation) = AsyncStream.makeStream(of: String.self, bufferingPolicy: .bufferingOldest(messageLimit))
        self.byteLimit = byteLimit
    }

    /// Queues `text`; `false` when it does not fit (the caller closes the page). One message
    /// larger than the limit fits an empty outbox, or it could never be sent.
    func offer(_ text: String) -> Bool {
        let size = text.utf8.count
        let fits = waitingBytes.withLock { waiting in
            guard waiting == 0 || waiting + size <= byteLimit else { return false }
            waiting += size
            return true
        }
        guard fits else { return false }
        if case .dropped = continuation.yield(text) { return false }
        return true
    }

    /// The bytes of the messages offered and not yet written.
    var bytesWaiting: Int {
        waitingBytes.withLock { $0 }
    }

    /// The socket wrote `text`: its bytes no longer wait.
    func written(_ text: String) {
        let size = text.utf8.count
        waitingBytes.withLock { $0 -= size }
    }

    /// Ends the outbox: the socket writes what waits, then closes.
    func finish() {
        continuation.finish()
    }
}
