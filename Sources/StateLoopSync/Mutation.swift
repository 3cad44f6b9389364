import Foundation
import StateLoopWire

/// A change the app makes to a backend-owned value: applied to the local view at once, sent to
/// the server, and kept on top of the server's value until the server's value contains it.
///
/// A mutation is data (so the queue can be persisted and replayed after a relaunch): it says
/// what changes locally in ``apply(to:)``; how it is sent is given once to the
/// ``OptimisticResource``.
///
/// ```swift
/// struct AddPlayer: Mutation {
///     let player: Player
///     func apply(to roster: inout [Player]) { roster.append(player) }
/// }
/// ```
public protocol Mutation<Value>: Codable, Sendable {
    /// The value the mutation changes.
    associatedtype Value: Sendable

    /// Changes `value` the way the server is expected to.
    func apply(to value: inout Value)
}

extension Sequence {
    /// `value` with every mutation of the sequence applied in order: what an optimistic
    /// resource shows on top of the confirmed value.
    public func replayed<M: Mutation>(on value: M.Value) -> M.Value where Element == PendingMutation<M> {
        var result = value
        for pending in self {
            pending.mutation.apply(to: &result)
        }
        return result
    }
}

/// Where a mutation is in its life.
public enum MutationStatus: Hashable, Codable, Sendable {
    /// Waiting for the mutations before it.
    case pending
    /// On its way to the server.
    case sent
    /// Accepted by the server at `version`; still shown on top until the confirmed value
    /// reaches that version.
    case confirmed(Version)
    /// Not sent within the app's ``ResourcePolicy/maximumMutationAge``: still shown, never sent
    /// by itself again (nor anything queued after it) until the app calls
    /// ``OptimisticResource/retry(_:)`` or ``OptimisticResource/discard(_:)``. A screen says
    /// "could not send".
    case expired
}

/// A mutation in the queue, with its identifier and status.
public struct PendingMutation<M: Mutation>: Codable, Sendable, Identifiable {
    /// The client mutation id.
    public let id: MutationID
    /// The change.
    public let mutation: M
    /// Where it is.
    public internal(set) var status: MutationStatus
    /// When it was queued (or retried after it expired), on the wall clock, so that its age
    /// survives a relaunch; `nil` for a mutation stored before ages were kept, which never
    /// expires.
    public internal(set) var queuedAt: Date?

    /// A mutation not sent yet.
    public init(_ mutation: M, id: MutationID = MutationID(), queuedAt: Date? = nil) {
        self.id = id
        self.mutation = mutation
        self.status = .pending
        self.queuedAt = queuedAt
    }
}

extension PendingMutation: Equatable where M: Equatable {}

/// A mutation the server refused, or that its store could not keep: removed from the view,
/// reported once.
public struct RefusedMutation<M: Mutation>: Sendable {
    /// The client mutation id.
    public let id: MutationID
    /// The refused change; `nil` for a mutation its store dropped (see ``DroppedMutation``),
    /// whose type may no longer exist.
    public let mutation: M?
    /// What the server (or the network) said; for a dropped mutation, an unrecoverable failure
    /// whose underlying error is the ``DroppedMutation``.
    public let error: ResourceFailure
}

/// A pending mutation its store could not give back: a journal migration dropped it, or it no
/// longer decodes as the app's mutation type. Never dropped silently: the
/// ``OptimisticResource`` that loads the store reports it through `refusals()`.
public struct DroppedMutation: Error, Sendable, Equatable, CustomStringConvertible {
    /// The client mutation id it was made with.
    public let id: MutationID
    /// Why it was dropped.
    public let reason: String

    public init(id: MutationID, reason: String) {
        self.id = id
        self.reason = reason
    }

    public var description: String {
        "Mutation \(id) was dropped: \(reason)"
    }
}

/// Keeps the queue of pending mutations across launches. ``InMemoryMutationStore`` keeps it for
/// the process's life; StateLoopJournal stores it in SQLite.
public protocol MutationStore<M>: Sendable {
    associatedtype M: Mutation

    /// The queue as last saved, oldest first.
    func load() async throws -> [PendingMutation<M>]
    /// Replaces the saved queue.
    func save(_ queue: [PendingMutation<M>]) async throws
    /// The confirmed value as last saved, so that the optimistic value can be shown after a
    /// relaunch before the server answers (offline, say). `nil` by default.
    func loadConfirmed() async throws -> Versioned<M.Value>?
    /// Replaces the saved confirmed value. Does nothing by default.
    func saveConfirmed(_ value: Versioned<M.Value>) async throws
    /// The mutations the store dropped since the last call (a migration dropped them, say), to
    /// be reported as failures; after ``load()``. None by default.
    func takeDropped() async throws -> [DroppedMutation]
}

extension MutationStore {
    /// Keeps no confirmed value.
    public func loadConfirmed() async throws -> Versioned<M.Value>? { nil }
    /// Keeps no confirmed value.
    public func saveConfirmed(_ value: Versioned<M.Value>) async throws {}
    /// Drops nothing.
    public func takeDropped() async throws -> [DroppedMutation] { [] }
}

/// A ``MutationStore`` in memory.
public actor InMemoryMutationStore<M: Mutation>: MutationStore {
    private var queue: [PendingMutation<M>]
    private var confirmed: Versioned<M.Value>?

    /// A store holding `queue`.
    public init(_ queue: [PendingMutation<M>] = []) {
        self.queue = queue
    }

    public func load() -> [PendingMutation<M>] {
        queue
    }

    public func save(_ queue: [PendingMutation<M>]) {
        self.queue = queue
    }

    // Declared `async`: called from outside the actor, a synchronous method is async only
    // implicitly, and in an async context Swift prefers the protocol extension's explicitly
    // async default, which keeps nothing: `await store.saveConfirmed(value)` did nothing.
    public func loadConfirmed() async -> Versioned<M.Value>? {
        confirmed
    }

    public func saveConfirmed(_ value: Versioned<M.Value>) async {
        confirmed = value
    }
}
