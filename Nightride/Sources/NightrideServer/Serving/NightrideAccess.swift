import Hummingbird
import StateLoopServer

/// Who may do what on Nightride. A request's session token names its user; a user reads their
/// own two values. The rules, not the caller, decide whose values a mutation changes (a
/// passenger's request offers a driver a ride), so every write of a mutation's rules is allowed.
package struct NightrideAccess: AccessPolicy {
    /// The user of a live session token, `nil` for none; throws when the store cannot say.
    let user: @Sendable (_ token: String) async throws -> String?

    package func principal(for request: Request) async throws -> String? {
        guard let token = Self.token(of: request) else { return nil }
        return try await user(token)
    }

    /// The request's bearer token (``Request/bearerToken``), or for a push upgrade (a browser's
    /// WebSocket cannot set headers) its `?token=`.
    static func token(of request: Request) -> String? {
        if let token = request.bearerToken { return token }
        return request.uri.path.hasSuffix("/push") ? request.uri.queryParameters.get("token") : nil
    }

    package func id(of user: String) -> String { user }

    package func mayRead(_ key: ResourceKey, as user: String) -> Bool {
        key.id == user && (key.resource == NightrideResources.driverMode.name || key.resource == NightrideResources.ride.name)
    }

    package func mayWrite(_ key: ResourceKey, as user: String) -> Bool { true }
}
