/// The bookkeeping of a journal's writes, kept apart from the file so that it reads as a small
/// state machine: events are recorded, then committed or kept for the next try; every so many
/// events, a commit also saves the state.
///
/// Events wait unencoded: a commit encodes them all at once (see `Journal.encodeRows`), which
/// costs less than one encoding each and can use every core.
struct JournalLedger<State, Event> {
    private(set) var lastSequence: Int64
    private(set) var durableSequence: Int64
    private(set) var snapshotSequence: Int64?
    private(set) var lastError: JournalError?
    /// Recorded, not yet committed, oldest first, with their sequence numbers.
    private(set) var unwritten: [(sequence: Int64, event: Event)] = []
    private(set) var eventsSinceSnapshot: Int
    /// The state after the last recorded event, kept only once a snapshot is due.
    private(set) var stateToSave: State?
    let snapshotInterval: Int?

    init(lastSequence: Int64, snapshotSequence: Int64?, eventsSinceSnapshot: Int, snapshotInterval: Int?) {
        self.lastSequence = lastSequence
        self.durableSequence = lastSequence
        self.snapshotSequence = snapshotSequence
        self.eventsSinceSnapshot = eventsSinceSnapshot
        self.snapshotInterval = snapshotInterval
    }

    var nextSequence: Int64 { lastSequence + 1 }

    var isSnapshotDue: Bool {
        guard let snapshotInterval else { return false }
        return eventsSinceSnapshot >= snapshotInterval
    }

    var health: JournalHealth {
        JournalHealth(
            lastSequence: lastSequence,
            durableSequence: durableSequence,
            snapshotSequence: snapshotSequence,
            lastError: lastError
        )
    }

    mutating func recorded(_ event: Event, producing state: State) {
        lastSequence += 1
        unwritten.append((lastSequence, event))
        eventsSinceSnapshot += 1
        if isSnapshotDue {
            stateToSave = state
        }
    }

    /// For a restored state whose tail is long enough to be worth saving at once.
    mutating func restored(_ state: State) {
        if isSnapshotDue {
            stateToSave = state
        }
    }

    mutating func committed(savedSnapshot: Bool) {
        durableSequence = lastSequence
        unwritten.removeAll(keepingCapacity: true)
        lastError = nil
        if savedSnapshot {
            snapshotSequence = lastSequence
            eventsSinceSnapshot = 0
            stateToSave = nil
        }
    }

    /// The commit failed; everything recorded stays for the next one.
    mutating func failed(_ error: JournalError) {
        lastError = error
    }

    /// The state could not be encoded: no snapshot until the next interval.
    mutating func snapshotSkipped(_ error: JournalError) {
        lastError = error
        eventsSinceSnapshot = 0
        stateToSave = nil
    }

    /// The events at `sequences` cannot be encoded: they live in memory only.
    mutating func unencodable(_ sequences: Set<Int64>, _ error: JournalError) {
        unwritten.removeAll { sequences.contains($0.sequence) }
        lastError = error
    }
}
