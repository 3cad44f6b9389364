import Hummingbird
import StateLoopServer

// The example of AccessPolicy's documentation, compiled with the suite; BearerTokenTests checks
// that the documentation shows exactly what follows the marker.
// AccessPolicy example:

struct Rules: AccessPolicy {
    let sessions: Sessions

    func principal(for request: Request) async throws -> String? {
        guard let token = request.bearerToken else { return nil }
        return try await sessions.user(forToken: token)
    }

    func id(of user: String) -> String { user }
    func mayRead(_ key: ResourceKey, as user: String) -> Bool { key.id == user }
    func mayWrite(_ key: ResourceKey, as user: String) -> Bool { key.id == user }
}
