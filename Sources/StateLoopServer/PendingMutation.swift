import Foundation
import StateLoopWire

/// One mutation request on its way into a store transaction: who sent it under which id, what
/// it asks for, and which key's version answers it.
struct PendingMutation: Sendable {
    let id: MutationID
    /// The principal's id: ids and client numbers are kept apart per principal.
    let scope: String
    let fingerprint: UInt64
    let key: ResourceKey

    /// Answers the mutation inside `store`'s transaction: the remembered answer for a repeated
    /// id, or the handler's outcome, remembered with the client's progress in the same
    /// transaction. A handler error other than a ``MutationRefusal`` is thrown, so the
    /// transaction rolls back and nothing is remembered.
    func process(
        in store: any StoreTransaction, mayWrite: @escaping (ResourceKey) -> Bool, apply: (ServerTransaction) throws -> Void
    ) throws -> RememberedAnswer {
        if let remembered = try store.answer(to: id.rawValue, scope: scope) {
            guard remembered.fingerprint == fingerprint else {
                return refusal(MutationRefusal("mutationIDReused", "Mutation-ID \(id) was used for another change"))
            }
            return remembered
        }
        let parts = id.parts
        if let (client, sequence) = parts, let last = try store.lastMutationID(of: client, scope: scope), sequence <= last {
            // Its answer was forgotten because the client went on to later ones: a client that
            // follows the protocol never sends it again, and it must not run twice.
            return refusal(MutationRefusal("mutationAlreadyProcessed", "Mutation-ID \(id) is older than \(client)'s mutation \(last)"))
        }
        let transaction = ServerTransaction(store: store, mayWrite: mayWrite)
        let answer: RememberedAnswer
        do {
            try apply(transaction)
            let versions = try transaction.commitWrites()
            let version = try versions[key] ?? store.value(of: key)?.version ?? Version(epoch: store.epoch, counter: 0)
            answer = RememberedAnswer(fingerprint: fingerprint, status: 200, body: WireMessage.receipt(version))
        } catch let refused as MutationRefusal {
            answer = refusal(refused)
        }
        try store.remember(answer, to: id.rawValue, scope: scope, client: parts?.client, sequence: parts?.sequence)
        if let (client, sequence) = parts {
            try store.setLastMutationID(sequence, of: client, scope: scope)
        }
        return answer
    }

    private func refusal(_ refusal: MutationRefusal) -> RememberedAnswer {
        RememberedAnswer(fingerprint: fingerprint, status: refusal.status, body: WireMessage.error(refusal.body.error, refusal.body.message))
    }
}
