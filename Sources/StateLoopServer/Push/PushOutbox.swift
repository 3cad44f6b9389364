import StateLoopWire

/// The pushes waiting for one socket, and whether a writer is at work on them: a pure state
/// machine, kept under its ``PushSocketWriter``'s lock.
///
/// A socket follows one key, so at most one value waits: a slow reader costs one value, never
/// a queue that grows. A socket that follows a collection's query holds at most one difference
/// likewise: a later one is composed into the one waiting (``RowsPush/followed(by:)``). Versions only move forward: an offer older than what was already queued
/// or sent is dropped; an offer of the same version with a newer `lastMutationID` replaces the
/// one waiting.
///
/// No task waits on an idle outbox: an offer to an idle outbox says that a writer must start,
/// and the writer asks ``next()`` until it is told to pause (nothing waits) or to finish (the
/// outbox is closed and empty). A socket that waits for its next push therefore holds no task,
/// and no task's memory, of its own.
struct PushOutbox: Sendable {
    /// A value waiting to be pushed, with the reader's `lastMutationID` as of its commit.
    struct Entry: Sendable, Equatable {
        var value: StoredValue
        var lastMutationID: UInt64?
        /// The push's text, when a fan-out encoded it once for all its sockets; the writer
        /// encodes it otherwise. Not part of the entry's identity.
        var encoded: EncodedPush? = nil
        /// For a socket that follows a collection's query: the difference to push, which
        /// ``value`` only positions (its version is the difference's feed position).
        var rows: RowsPush? = nil

        static func == (lhs: Entry, rhs: Entry) -> Bool {
            lhs.value == rhs.value && lhs.lastMutationID == rhs.lastMutationID && lhs.rows == rhs.rows
        }
    }

    /// What happened to an offer.
    enum Offer: Equatable {
        /// Queued for the writer.
        case queued
        /// Replaced a value that was still waiting: the reader never sees that one.
        case coalesced
        /// Older than (or the same as) what the reader has or will get: dropped.
        case outdated
        /// The outbox is closed.
        case closed
    }

    /// What the writer does next.
    enum Step: Equatable {
        /// Push this value.
        case write(Entry)
        /// Nothing waits: stop; an offer starts a writer again.
        case pause
        /// The outbox was closed and nothing more will come: end the socket. Said once.
        case finish
    }

    private var waiting: Entry?
    /// The newest version queued or sent, with its `lastMutationID`.
    private var newest: (version: Version, lastMutationID: UInt64?)?
    private var isWriting = false
    private(set) var isClosed = false
    private var isFinished = false

    /// An empty, open outbox with no writer.
    init() {}

    /// Offers `entry`; `startWriter` is true when no writer is at work and one must start.
    mutating func offer(_ entry: Entry) -> (offer: Offer, startWriter: Bool) {
        guard !isClosed else { return (.closed, false) }
        if let newest {
            let isNewer = entry.value.version > newest.version
            let tellsMore = entry.value.version == newest.version && (entry.lastMutationID ?? 0) > (newest.lastMutationID ?? 0)
            guard isNewer || tellsMore else { return (.outdated, false) }
        }
        newest = (entry.value.version, entry.lastMutationID)
        let replaced = waiting != nil
        if let later = entry.rows, var composed = waiting, let earlier = composed.rows {
            // Differences are not replaced but composed: the reader still learns of the
            // earlier one's rows.
            composed.value = entry.value
            composed.lastMutationID = entry.lastMutationID
            composed.rows = earlier.followed(by: later)
            composed.encoded = nil
            waiting = composed
            return (.coalesced, wake())
        }
        waiting = entry
        return (replaced ? .coalesced : .queued, wake())
    }

    /// The writer's next step. A writer told to pause or finish must stop.
    mutating func next() -> Step {
        if let entry = waiting {
            waiting = nil
            return .write(entry)
        }
        if isClosed {
            // `.finish` is said once; a writer asking again has nothing to do.
            guard !isFinished else { return .pause }
            isFinished = true
            return .finish
        }
        isWriting = false
        return .pause
    }

    /// Closes the outbox: no more offers; the writer pushes what waits (unless
    /// `discardingWaiting`), then is told to finish. Returns whether a writer must start to
    /// be told so.
    mutating func close(discardingWaiting: Bool = false) -> Bool {
        isClosed = true
        if discardingWaiting { waiting = nil }
        return isFinished ? false : wake()
    }

    /// Closes the outbox for a socket that is already over (its reader left, or its writer
    /// ended it): what waits is dropped and no writer starts; a writer at work is told to
    /// finish.
    mutating func abandon() {
        isClosed = true
        waiting = nil
        if !isWriting { isFinished = true }
    }

    /// Whether a value waits.
    var hasWaiting: Bool {
        waiting != nil
    }

    /// Marks a writer at work; true if none was.
    private mutating func wake() -> Bool {
        defer { isWriting = true }
        return !isWriting
    }
}
