import Foundation
import NightrideModel
import StateLoopServer
import StateLoopWire

/// One change of one user's resource: the new value, its version, and when it happened.
public struct ChangeRecord: Sendable, Hashable {
    /// When the change happened, in the core's time (time since the server started).
    public var time: Duration
    /// Whose resource changed.
    public var user: String
    /// The resource's version after the change.
    public var version: Version
    /// The resource's value after the change.
    public var value: UserValueContent

    /// A record from its parts.
    public init(time: Duration, user: String, version: Version, value: UserValueContent) {
        self.time = time
        self.user = user
        self.version = version
        self.value = value
    }

    /// Which resource changed.
    public var resource: UserValue { value.resource }

    /// The record of a stored value of one of the two resources clients follow; `nil` for
    /// another resource.
    init?(_ stored: StoredValue, at time: Duration) {
        let decoder = Self.decoder
        let value: UserValueContent? =
            switch UserValue(rawValue: stored.key.resource) {
            case .driverMode: (try? decoder.decode(Bool.self, from: stored.json)).map(UserValueContent.driverMode)
            case .ride: (try? decoder.decode(RideStatus.self, from: stored.json)).map(UserValueContent.ride)
            case nil: nil
            }
        guard let value else { return nil }
        self.init(time: time, user: stored.key.id, version: stored.version, value: value)
    }

    /// One decoder for every stored value read back, rather than one per record (a catch-up
    /// reads the whole feed).
    private static let decoder = JSONDecoder()
}
