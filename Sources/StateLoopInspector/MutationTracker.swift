import StateLoopSync
import StateLoopWire

/// What became of each pending mutation of an optimistic resource, from one status to the
/// next. Statuses arrive sampled (a watcher may miss some), so a mutation that left the queue is
/// judged by the confirmed value: confirmed if it contains it (its `lastMutationID` reached the
/// mutation's number) or if it had been accepted, rejected otherwise.
///
/// A pure value: the watcher's task owns it.
struct MutationTracker<M: Mutation> {
    /// One step of one mutation.
    struct Step {
        let id: MutationID
        let mutation: M
        let outcome: String
        /// The version the server accepted it at, for `accepted`.
        let version: Version?
    }

    private var known: [MutationID: PendingMutation<M>] = [:]
    private let client: ClientID

    init(client: ClientID) {
        self.client = client
    }

    /// The steps between the last status and `status`, in queue order, then the mutations
    /// that left it.
    mutating func steps(to status: OptimisticStatus<M>) -> [Step] {
        var steps: [Step] = []
        for pending in status.mutations {
            let before = known[pending.id]
            if before == nil {
                steps.append(Step(id: pending.id, mutation: pending.mutation, outcome: "queued", version: nil))
            }
            steps += Self.progress(from: before?.status ?? .pending, to: pending)
        }
        let current = Set(status.mutations.map(\.id))
        let contained = status.confirmed?.lastMutationID ?? 0
        for (id, gone) in known.sorted(by: { ($0.key.sequence(of: client) ?? 0) < ($1.key.sequence(of: client) ?? 0) }) where !current.contains(id) {
            let accepted = if case .confirmed = gone.status { true } else { false }
            let included = id.sequence(of: client).map { $0 <= contained } ?? false
            steps.append(Step(id: id, mutation: gone.mutation, outcome: accepted || included ? "confirmed" : "rejected", version: nil))
        }
        known = Dictionary(uniqueKeysWithValues: status.mutations.map { ($0.id, $0) })
        return steps
    }

    /// The steps from `old` to the mutation's status now: sent, then accepted.
    private static func progress(from old: MutationStatus, to pending: PendingMutation<M>) -> [Step] {
        switch (old, pending.status) {
        case (.pending, .sent):
            [Step(id: pending.id, mutation: pending.mutation, outcome: "sent", version: nil)]
        case (.pending, .confirmed(let version)), (.sent, .confirmed(let version)):
            (old == .pending ? [Step(id: pending.id, mutation: pending.mutation, outcome: "sent", version: nil)] : [])
                + [Step(id: pending.id, mutation: pending.mutation, outcome: "accepted", version: version)]
        default:
            []
        }
    }
}
