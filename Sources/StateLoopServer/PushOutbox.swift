import StateLoopWire
import Synchronization

/// The pushes waiting for one socket: at most the newest value per key, so a slow reader costs
/// one value per key it follows, never a queue that grows.
///
/// Filled by ``PushHub`` (any thread) and drained by the socket's one writer task through
/// ``next()``. Versions only move forward per key: an offer older than what was already
/// queued or sent is dropped; an offer of the same version with a newer `lastMutationID`
/// replaces the one waiting.
final class PushOutbox: Sendable {
    /// A value waiting to be pushed, with the reader's `lastMutationID` as of its commit.
    struct Entry: Sendable, Equatable {
        var value: StoredValue
        var lastMutationID: UInt64?
    }

    /// What happened to an offer.
    enum Offer: Equatable {
        /// Queued for the writer.
        case queued
        /// Replaced a value of the same key that was still waiting: the reader never sees it.
        case coalesced
        /// Older than (or the same as) what the reader has or will get: dropped.
        case outdated
        /// The outbox is closed.
        case closed
    }

    private struct State {
        var waiting: [ResourceKey: Entry] = [:]
        var order: [ResourceKey] = []
        /// The newest version queued or sent per key, with its `lastMutationID`.
        var newest: [ResourceKey: (version: Version, lastMutationID: UInt64?)] = [:]
        var writer: CheckedContinuation<Entry?, Never>?
        var isClosed = false
    }

    private let state = Mutex(State())

    func offer(_ entry: Entry) -> Offer {
        let (offer, writer) = state.withLock { state -> (Offer, CheckedContinuation<Entry?, Never>?) in
            guard !state.isClosed else { return (.closed, nil) }
            let key = entry.value.key
            if let newest = state.newest[key] {
                let isNewer = entry.value.version > newest.version
                let tellsMore = entry.value.version == newest.version && (entry.lastMutationID ?? 0) > (newest.lastMutationID ?? 0)
                guard isNewer || tellsMore else { return (.outdated, nil) }
            }
            state.newest[key] = (entry.value.version, entry.lastMutationID)
            if let writer = state.writer {
                state.writer = nil
                return (.queued, writer)
            }
            let replaced = state.waiting.updateValue(entry, forKey: key) != nil
            if !replaced { state.order.append(key) }
            return (replaced ? .coalesced : .queued, nil)
        }
        writer?.resume(returning: entry)
        return offer
    }

    /// The next value to push, waiting for one; `nil` once the outbox is closed and what was
    /// waiting has been taken (or at once if the task is cancelled).
    func next() async -> Entry? {
        if let entry = takeWaiting() { return entry }
        return await withTaskCancellationHandler {
            await withCheckedContinuation { (continuation: CheckedContinuation<Entry?, Never>) in
                let immediate: Entry?? = state.withLock { state in
                    precondition(state.writer == nil, "an outbox has one writer task")
                    if let entry = Self.take(&state) { return .some(entry) }
                    if state.isClosed || Task.isCancelled { return .some(nil) }
                    state.writer = continuation
                    return nil
                }
                if let immediate { continuation.resume(returning: immediate) }
            }
        } onCancel: {
            close(discardingWaiting: true)
        }
    }

    /// Closes the outbox: no more offers; the writer gets what is waiting (unless
    /// `discardingWaiting`), then `nil`.
    func close(discardingWaiting: Bool = false) {
        let writer = state.withLock { state in
            state.isClosed = true
            if discardingWaiting {
                state.waiting = [:]
                state.order = []
            }
            defer { state.writer = nil }
            return state.writer
        }
        writer?.resume(returning: nil)
    }

    /// How many values wait.
    var waitingCount: Int {
        state.withLock { $0.waiting.count }
    }

    private func takeWaiting() -> Entry? {
        state.withLock { Self.take(&$0) }
    }

    private static func take(_ state: inout State) -> Entry? {
        guard !state.order.isEmpty else { return nil }
        let key = state.order.removeFirst()
        return state.waiting.removeValue(forKey: key)
    }
}
