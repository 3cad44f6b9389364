import Hummingbird
import StateLoopServer

/// The access policy the server samples name `Rules`: a request's user is its bearer token, and
/// a user reads and writes the keys named after them.
struct SampleRules: AccessPolicy {
    func principal(for request: Request) async throws -> String? { request.bearerToken }
    func id(of user: String) -> String { user }
    func mayRead(_ key: ResourceKey, as user: String) -> Bool { key.id == user }
    func mayWrite(_ key: ResourceKey, as user: String) -> Bool { key.id == user }
}
