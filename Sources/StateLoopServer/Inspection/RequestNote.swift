import StateLoopWire
import Synchronization

/// What the routes learn of the request they answer (who sent it, which value it read or
/// changed), noted for the request's report while the server is watched: the middleware that
/// reports the request binds one to the task that answers it.
package final class RequestNote: Sendable {
    /// What was found.
    package struct Found: Sendable {
        /// The principal, as the access policy returned it: reflected and redacted by whoever
        /// watches, never kept by the kit.
        package var principal: (any Sendable)?
        /// Its ``AccessPolicy/id(of:)``.
        package var principalID: String?
        /// The key read or changed.
        package var key: ResourceKey?
        /// The version read, or the one a mutation was answered with.
        package var version: Version?
    }

    private let found = Mutex(Found())

    package init() {}

    /// The note of the request the calling task answers, if its server is watched.
    @TaskLocal package static var current: RequestNote?

    package var value: Found {
        found.withLock { $0 }
    }

    /// Notes the principal the request came from.
    package static func principal(_ principal: any Sendable, id: String) {
        current?.found.withLock { found in
            found.principal = principal
            found.principalID = id
        }
    }

    /// Notes the key the request read or changed, and its version.
    package static func key(_ key: ResourceKey, version: Version?) {
        current?.found.withLock { found in
            found.key = key
            found.version = version
        }
    }
}
