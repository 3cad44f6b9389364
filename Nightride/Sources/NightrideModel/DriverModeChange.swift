/// A user switching driver mode on or off: the body of `POST /me/driver-mode`, `{"on": true}`.
///
/// The client makes it a `Mutation` of the driver-mode flag (`NightrideClient`), so that it can
/// show the switch flipped at once; the server may still switch the mode off again later on its
/// own (after inactivity).
public struct DriverModeChange: Codable, Sendable, Hashable {
    /// Whether driver mode should be on.
    public var on: Bool

    /// A change to `on`.
    public init(on: Bool) {
        self.on = on
    }
}
