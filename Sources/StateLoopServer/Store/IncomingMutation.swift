import Foundation
import Logging
import StateLoopWire

/// One mutation request on its way into a store transaction: who sent it under which id and
/// what it asks for.
struct IncomingMutation: Sendable {
    let id: MutationID
    /// The principal's id: ids and client numbers are kept apart per principal.
    let scope: String
    /// The method, the path and the body in canonical form, digested.
    let fingerprint: UInt64

    /// What a mutation route makes of a request once its remembered answer is known to be
    /// missing: the key whose version answers it, and the handler bound to the decoded body.
    struct Prepared: Sendable {
        let key: ResourceKey
        /// Whether ``key`` names a collection's row rather than a value.
        var isRow = false
        let apply: @Sendable (ServerTransaction) throws -> Void
    }

    /// Answers the mutation inside `store`'s transaction.
    ///
    /// The remembered answer of a repeated id comes first, before anything that may have
    /// changed since the first time (the body's type, the access rules), so a retry of an
    /// applied mutation always gets the answer it missed. Otherwise `prepare` decodes and checks
    /// the request (its refusals are answered, not remembered: nothing was processed), the
    /// handler runs, and its outcome is remembered with the client's progress in the same
    /// transaction. A store failure is thrown, so nothing is remembered and the retry runs anew;
    /// any other handler error is a refusal (422), remembered like one, since a handler does no
    /// I/O and would fail the same way again.
    ///
    /// What ``process(in:mayWrite:logger:prepare:)`` made of the mutation.
    struct Processed {
        let answer: RememberedAnswer
        /// The push sockets to close once the transaction has committed (sessions the handler
        /// ended).
        var closings = SocketClosings()
        /// Whether the answer is the one remembered from the first time.
        var isRepeat = false
        /// The key whose version answers it, once its request was decoded.
        var key: ResourceKey? = nil

        /// The mutation's report for those who watch the server.
        func report(of mutation: IncomingMutation) -> ServerActivity.MutationReport {
            let version = answer.status == 200 ? WireMessage.receiptVersion(answer.body) : nil
            let refusal = answer.status == 200 ? nil : WireMessage.errorText(answer.body)
            let outcome: ServerActivity.MutationReport.Outcome = isRepeat ? .repeated : answer.status == 200 ? .applied : .refused
            return .init(
                id: mutation.id, scope: mutation.scope, outcome: outcome, status: answer.status, version: version, refusal: refusal)
        }
    }

    /// - Returns: the answer, and the push sockets to close once the transaction has committed
    ///   (sessions the handler ended).
    func process(
        in store: any StoreTransaction,
        mayWrite: @escaping (ResourceKey) -> Bool,
        logger: Logger,
        prepare: () throws -> Prepared
    ) throws -> Processed {
        if let remembered = try store.answer(to: id.rawValue, scope: scope) {
            guard remembered.fingerprint == fingerprint else {
                return Processed(answer: refusal(MutationRefusal("mutationIDReused", "Mutation-ID \(id) was used for another change")))
            }
            return Processed(answer: remembered, isRepeat: true)
        }
        let parts = id.parts
        if let (client, sequence) = parts, let last = try store.lastMutationID(of: client, scope: scope), sequence <= last {
            // Its answer was forgotten because the client went on to later ones: a client that
            // follows the protocol never sends it again, and it must not run twice.
            let refused = MutationRefusal("mutationAlreadyProcessed", "Mutation-ID \(id) is older than \(client)'s mutation \(last)")
            return Processed(answer: refusal(refused))
        }
        let prepared: Prepared
        do {
            prepared = try prepare()
        } catch let refused as MutationRefusal {
            return Processed(answer: refusal(refused))
        }
        let (answer, closings) = try run(prepared, in: store, mayWrite: mayWrite, logger: logger)
        try store.remember(answer, to: id.rawValue, scope: scope, client: parts?.client, sequence: parts?.sequence)
        if let (client, sequence) = parts {
            try store.setLastMutationID(sequence, of: client, scope: scope)
        }
        return Processed(answer: answer, closings: closings, key: prepared.key)
    }

    private func run(
        _ prepared: Prepared, in store: any StoreTransaction, mayWrite: @escaping (ResourceKey) -> Bool, logger: Logger
    ) throws -> (RememberedAnswer, SocketClosings) {
        store.cause = ChangeCause(scope: scope, mutation: id)
        let transaction = ServerTransaction(store: store, mayWrite: mayWrite, mutationID: id)
        do {
            try prepared.apply(transaction)
            let versions = try transaction.commitWrites()
            let version =
                try prepared.isRow
                ? transaction.rowVersions[prepared.key] ?? StoreFailure.wrap { try store.row(of: prepared.key)?.version }
                : versions[prepared.key] ?? StoreFailure.wrap { try store.value(of: prepared.key)?.version }
            return (
                RememberedAnswer(
                    fingerprint: fingerprint, status: 200, body: WireMessage.receipt(version ?? Version(epoch: store.epoch, counter: 0))),
                transaction.socketsToClose
            )
        } catch let refused as MutationRefusal {
            return (refusal(refused), SocketClosings())
        } catch let failure as StoreFailure {
            throw failure
        } catch {
            logger.error("mutation handler failed", metadata: ["mutation": "\(id)", "error": "\(error)"])
            return (refusal(MutationRefusal("handlerFailed", "the server could not apply this mutation: \(error)", status: 422)), SocketClosings())
        }
    }

    private func refusal(_ refusal: MutationRefusal) -> RememberedAnswer {
        RememberedAnswer(fingerprint: fingerprint, status: refusal.status, body: WireMessage.error(refusal.body.error, refusal.body.message))
    }
}

/// The store failed under a handler: thrown through it, so the transaction rolls back and the
/// request is answered 503 (worth retrying), never remembered.
struct StoreFailure: Error {
    let underlying: any Error

    static func wrap<T>(_ body: () throws -> T) throws -> T {
        do {
            return try body()
        } catch let failure as StoreFailure {
            throw failure
        } catch {
            throw StoreFailure(underlying: error)
        }
    }
}
