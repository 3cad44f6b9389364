import Hummingbird

/// The app's rules of who may do what, which ``SyncServer`` checks on every route and every
/// push: who a request comes from, and which keys that principal may read and write.
///
/// ```swift
/// struct Rules: AccessPolicy {
///     let sessions: Sessions
///
///     func principal(for request: Request) async throws -> String? {
///         guard let token = request.bearerToken else { return nil }
///         return try await sessions.user(forToken: token)
///     }
///
///     func id(of user: String) -> String { user }
///     func mayRead(_ key: ResourceKey, as user: String) -> Bool { key.id == user }
///     func mayWrite(_ key: ResourceKey, as user: String) -> Bool { key.id == user }
/// }
/// ```
///
/// A request with no principal is answered 401; a key the principal may not read or write is
/// answered 404, exactly as a key that does not exist, so its existence is never revealed.
public protocol AccessPolicy: Sendable {
    /// Who the app's requests come from: a user, a device, a service.
    associatedtype Principal: Sendable

    /// The principal a request comes from, or `nil` when it has no valid session (unknown or
    /// expired token): 401. Throw when the answer cannot be known now (the sessions' store is
    /// down, say): 503, which clients retry.
    func principal(for request: Request) async throws -> Principal?

    /// A stable identifier of the principal: the scope its mutation ids and clients are kept
    /// under, and what its sockets are counted by.
    func id(of principal: Principal) -> String

    /// Whether `principal` may read `key`, over `GET` and push. Asked again for every push,
    /// so taking access away closes the principal's socket on the next change.
    func mayRead(_ key: ResourceKey, as principal: Principal) -> Bool

    /// Whether a mutation made by `principal` may write `key`.
    func mayWrite(_ key: ResourceKey, as principal: Principal) -> Bool
}
