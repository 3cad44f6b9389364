import StateLoopServer
import StateLoopWire

/// What the store says of the mutations it processed, for audits: which commits applied each
/// mutation, and how far each client's mutations were processed (applied or refused).
///
/// Built from the store's change feed and its clients' progress, so it survives the server's
/// process: a mutation applied twice shows as one id in two commits of one epoch, a lost one as
/// a sequence number beyond its client's progress.
public struct MutationAudit: Sendable {
    /// The commits (epoch and feed position) that applied each mutation, per principal and id.
    private var commits: [Applied: Set<Commit>] = [:]
    /// The newest processed sequence number per principal and client.
    private var progress: [Client: UInt64] = [:]

    /// An empty audit.
    public init() {}

    /// Notes that the commit at feed position `commit` of `epoch` applied `cause`'s mutation.
    mutating func noteApplied(_ cause: ChangeCause, commit: UInt64, epoch: UInt64) {
        commits[Applied(scope: cause.scope, id: cause.mutation.rawValue), default: []].insert(Commit(epoch: epoch, position: commit))
    }

    /// Notes a client's progress; it never goes back, even when a store in memory is replaced.
    mutating func noteProgress(_ client: ClientProgress) {
        let key = Client(scope: client.scope, client: client.client.rawValue)
        progress[key] = max(progress[key] ?? 0, client.lastMutationID)
    }

    /// What went wrong with the mutation `id` of `user`: applied in two commits of one epoch,
    /// or never processed (its sequence beyond its client's progress); `nil` if neither.
    public func problem(with id: String, of user: String) -> String? {
        let epochs = (commits[Applied(scope: user, id: id)] ?? []).map(\.epoch)
        if Set(epochs).count < epochs.count {
            return "\(id) was applied twice in one epoch"
        }
        guard let (client, sequence) = MutationID(rawValue: id).parts else { return nil }
        if sequence > progress[Client(scope: user, client: client.rawValue)] ?? 0 {
            return "\(id) was never processed (lost)"
        }
        return nil
    }

    private struct Applied: Hashable {
        let scope: String
        let id: String
    }

    private struct Commit: Hashable {
        let epoch: UInt64
        let position: UInt64
    }

    private struct Client: Hashable {
        let scope: String
        let client: String
    }
}
