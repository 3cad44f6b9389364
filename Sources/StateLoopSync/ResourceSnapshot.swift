/// What a screen state keeps of a remote resource: the value shown (the server's newest with
/// the pending mutations on top), the confirmed version behind it, how many mutations are
/// pending, and the resource's ``health``.
///
/// Made to live in a journaled state: it encodes the value, the version and the pending count,
/// so that a relaunched app shows its last screen at once, and leaves out the health, which
/// describes the connection of one launch (it decodes as all well, and the resource's first
/// status replaces it).
///
/// ```swift
/// struct Screen: Codable { var ride = ResourceSnapshot<RideStatus>() }
/// enum Event: Codable { case ride(ResourceSnapshot<RideStatus>) }
/// // feedbacks:
/// .resource(rides) { status in .ride(ResourceSnapshot(status)) }
/// // reduce:
/// case .ride(let latest): state.ride.update(to: latest)
/// ```
public struct ResourceSnapshot<Value: Sendable>: Sendable {
    /// The value shown: the server's newest with the pending mutations on top; `nil` while
    /// nothing is known.
    public var value: Value?
    /// The server's version behind ``value``.
    public var confirmedVersion: Version?
    /// Mutations sent or waiting, not yet in the confirmed value.
    public var pendingMutations: Int
    /// How the resource is doing. Not encoded.
    public var health: ResourceHealth
    /// Where the status it was last updated from stands among its resource's statuses (an
    /// optimistic resource's; `nil` otherwise): an older status of the same resource, delivered
    /// late, is ignored. Encoded, so that a journal's or a recorded session's replay ignores the
    /// same statuses; a relaunch's resource is another publisher, never ordered against it.
    public private(set) var position: StatusPosition?

    /// Nothing known yet.
    public init() {
        self.init(value: nil, confirmedVersion: nil)
    }

    /// A snapshot from its parts.
    public init(value: Value?, confirmedVersion: Version?, pendingMutations: Int = 0, health: ResourceHealth = ResourceHealth()) {
        self.value = value
        self.confirmedVersion = confirmedVersion
        self.pendingMutations = pendingMutations
        self.health = health
    }

    /// An optimistic resource's status: its visible value, its confirmed version, its queue's
    /// length, and its health.
    public init<M: Mutation>(_ status: OptimisticStatus<M>) where M.Value == Value {
        self.init(
            value: status.value, confirmedVersion: status.confirmed?.version, pendingMutations: status.mutations.count,
            health: ResourceHealth(status)
        )
        position = status.position
    }

    /// A remote resource's status: its value and version, and its health.
    public init(_ status: ResourceStatus<Value>) {
        self.init(value: status.value?.value, confirmedVersion: status.value?.version, health: ResourceHealth(status))
    }

    /// Takes `latest` in, except that an unknown value (nothing confirmed yet, as right after a
    /// relaunch) keeps the value and version known so far: the screen a journal restored stays
    /// until the server says otherwise; and that a status older than the one shown (its
    /// ``position`` precedes this one's: delivered late, after a newer one the system took from
    /// ``StateLoop/System/mutate(_:_:event:fileID:line:)``) changes nothing.
    public mutating func update(to latest: ResourceSnapshot<Value>) {
        if let shown = position, let other = latest.position, other.precedes(shown) { return }
        position = latest.position ?? position
        if latest.value != nil {
            value = latest.value
            confirmedVersion = latest.confirmedVersion
        }
        pendingMutations = latest.pendingMutations
        health = latest.health
    }
}

extension ResourceSnapshot: Equatable where Value: Equatable {}
extension ResourceSnapshot: Hashable where Value: Hashable {}

extension ResourceSnapshot: Codable where Value: Codable {
    private enum CodingKeys: String, CodingKey {
        case value, confirmedVersion, pendingMutations, position
    }

    /// Decodes a snapshot; its health is all well (see ``health``).
    public init(from decoder: any Decoder) throws {
        let container = try decoder.container(keyedBy: CodingKeys.self)
        self.init(
            value: try container.decodeIfPresent(Value.self, forKey: .value),
            confirmedVersion: try container.decodeIfPresent(Version.self, forKey: .confirmedVersion),
            pendingMutations: try container.decodeIfPresent(Int.self, forKey: .pendingMutations) ?? 0
        )
        position = try container.decodeIfPresent(StatusPosition.self, forKey: .position)
    }

    /// Encodes the value, the version and the pending count; never the health.
    public func encode(to encoder: any Encoder) throws {
        var container = encoder.container(keyedBy: CodingKeys.self)
        try container.encodeIfPresent(value, forKey: .value)
        try container.encodeIfPresent(confirmedVersion, forKey: .confirmedVersion)
        try container.encode(pendingMutations, forKey: .pendingMutations)
        try container.encodeIfPresent(position, forKey: .position)
    }
}
