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
    public var value: ResourceValue

    /// A record from its parts.
    public init(time: Duration, user: String, version: Version, value: ResourceValue) {
        self.time = time
        self.user = user
        self.version = version
        self.value = value
    }

    /// Which resource changed.
    public var resource: Resource { value.resource }
}
