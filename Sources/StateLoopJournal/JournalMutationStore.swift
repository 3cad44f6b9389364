import Foundation
import StateLoopSync

/// The pending optimistic mutations of one resource and its last confirmed value, kept in a
/// journal's file: after a relaunch, `OptimisticResource` loads them and shows the optimistic
/// value at once, offline too, then sends the mutations in order with their original ids, so a
/// server that honours the id applies each once.
///
/// ```swift
/// let rides = OptimisticResource(
///     resource: ride,
///     store: journal.mutationStore(named: "ride", for: RideMutation.self),
///     send: sender.callAsFunction
/// )
/// ```
public struct JournalMutationStore<M: Mutation>: MutationStore where M.Value: Codable {
    /// The name the queue is kept under; one per resource.
    public let name: String
    let database: JournalDatabase

    /// The saved queue. A saved mutation that no longer decodes as `M` is not lost silently:
    /// it is moved aside, kept in the file, and reported by ``takeDropped()``.
    public func load() async throws -> [PendingMutation<M>] {
        let decoder = JSONDecoder()
        var kept: [PendingMutation<M>] = []
        var keptPayloads: [Data] = []
        var dropped: [(id: String, reason: String, payload: Data)] = []
        for payload in try database.mutations(in: name) {
            do {
                kept.append(try decoder.decode(PendingMutation<M>.self, from: payload))
                keptPayloads.append(payload)
            } catch {
                let id = (try? decoder.decode(StoredID.self, from: payload))?.id.rawValue ?? "?"
                dropped.append((id, "it no longer decodes as \(M.self): \(error)", payload))
            }
        }
        if !dropped.isEmpty {
            try database.replaceMutations(in: name, with: keptPayloads, dropping: dropped)
        }
        return kept
    }

    /// The mutations dropped by a migration or by ``load()`` and not reported yet.
    public func takeDropped() async throws -> [DroppedMutation] {
        try database.takeDropped(in: name).map { DroppedMutation(id: MutationID(rawValue: $0.id), reason: $0.reason) }
    }

    public func save(_ queue: [PendingMutation<M>]) async throws {
        let encoder = JSONEncoder()
        try database.replaceMutations(in: name, with: queue.map { try encoder.encode($0) })
    }

    public func loadConfirmed() async throws -> Versioned<M.Value>? {
        guard let payload = try database.confirmedValue(of: name) else { return nil }
        do {
            return try JSONDecoder().decode(Versioned<M.Value>.self, from: payload)
        } catch {
            throw JournalError.undecodableMutation(path: database.path, store: name, detail: "confirmed value: \(error)")
        }
    }

    public func saveConfirmed(_ value: Versioned<M.Value>) async throws {
        try database.setConfirmedValue(JSONEncoder().encode(value), of: name)
    }
}

/// The id of a stored pending mutation, read without its mutation.
private struct StoredID: Decodable {
    let id: MutationID
}

extension Journal {
    /// A store for the pending mutations of one resource, in this journal's file.
    ///
    /// - Parameters:
    ///   - name: Identifies the queue; use one name per resource.
    ///   - type: The type of the mutations it keeps.
    public func mutationStore<M: Mutation>(named name: String, for type: M.Type = M.self) -> JournalMutationStore<M>
    where M.Value: Codable {
        JournalMutationStore(name: name, database: database)
    }
}
