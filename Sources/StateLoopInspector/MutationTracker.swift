import StateLoopSync
import StateLoopWire

/// What became of each pending mutation of an optimistic resource, from what the resource
/// publishes (`OptimisticResource.observe()`): the mutations each step refused, then its
/// status. A mutation that left the queue was refused if that step said so, and confirmed
/// otherwise (contained in the confirmed value, whether or not its acceptance was seen).
///
/// A pure value: the watcher's task owns it.
struct MutationTracker<M: Mutation> {
    /// One step of one mutation.
    struct Step {
        let id: MutationID
        /// `nil` for a mutation its store dropped, whose type may no longer exist.
        let mutation: M?
        let outcome: String
        /// The version the server accepted it at, for `accepted`.
        var version: Version? = nil
        /// Why it was refused, for `refused`.
        var reason: String? = nil
    }

    private var known: [MutationID: PendingMutation<M>] = [:]
    /// Refused by the latest step, not yet seen gone.
    private var refused: [MutationID: RefusedMutation<M>] = [:]
    /// Discarded by the app, not yet seen gone.
    private var discarded: Set<MutationID> = []

    /// Notes the mutations a step refused; returns the steps of those never seen queued (a
    /// mutation its store dropped at launch, say), which no status will show.
    mutating func note(_ refusals: [RefusedMutation<M>]) -> [Step] {
        var steps: [Step] = []
        for failure in refusals {
            if known[failure.id] == nil {
                steps.append(Step(id: failure.id, mutation: failure.mutation, outcome: "refused", reason: failure.error.message))
            } else {
                refused[failure.id] = failure
            }
        }
        return steps
    }

    /// Notes the expired mutations the app discarded: gone from the next status, they were
    /// neither confirmed nor refused.
    mutating func noteDiscarded(_ ids: [MutationID]) {
        discarded.formUnion(ids)
    }

    /// The steps between the last status and `status`: each mutation's progress in queue
    /// order, then the mutations that left the queue, in the order they had been queued.
    mutating func steps(to status: OptimisticStatus<M>) -> [Step] {
        var steps: [Step] = []
        for pending in status.mutations {
            let before = known[pending.id]
            if before == nil {
                steps.append(Step(id: pending.id, mutation: pending.mutation, outcome: "queued"))
            }
            steps += Self.progress(from: before?.status ?? .pending, to: pending)
        }
        let current = Set(status.mutations.map(\.id))
        let order = Dictionary(uniqueKeysWithValues: known.keys.map { ($0, $0.parts?.sequence ?? 0) })
        for (id, gone) in known.sorted(by: { order[$0.key, default: 0] < order[$1.key, default: 0] }) where !current.contains(id) {
            if let failure = refused.removeValue(forKey: id) {
                steps.append(Step(id: id, mutation: gone.mutation, outcome: "refused", reason: failure.error.message))
            } else if discarded.remove(id) != nil {
                steps.append(Step(id: id, mutation: gone.mutation, outcome: "discarded"))
            } else {
                steps.append(Step(id: id, mutation: gone.mutation, outcome: "confirmed"))
            }
        }
        known = Dictionary(uniqueKeysWithValues: status.mutations.map { ($0.id, $0) })
        return steps
    }

    /// The steps from `old` to the mutation's status now: sent, then accepted; or held past its
    /// maximum age, then retried.
    private static func progress(from old: MutationStatus, to pending: PendingMutation<M>) -> [Step] {
        switch (old, pending.status) {
        case (.pending, .expired), (.sent, .expired):
            return [Step(id: pending.id, mutation: pending.mutation, outcome: "could not send")]
        case (.expired, .pending):
            return [Step(id: pending.id, mutation: pending.mutation, outcome: "retried")]
        case (.pending, .sent):
            return [Step(id: pending.id, mutation: pending.mutation, outcome: "sent")]
        case (.pending, .confirmed(let version)), (.sent, .confirmed(let version)):
            let sent = old == .pending ? [Step(id: pending.id, mutation: pending.mutation, outcome: "sent")] : []
            return sent + [Step(id: pending.id, mutation: pending.mutation, outcome: "accepted", version: version)]
        default:
            return []
        }
    }
}
