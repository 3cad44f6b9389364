import StateLoopSync

/// A user switching driver mode on or off: the body of `POST /me/driver-mode`, `{"on": true}`.
///
/// It is a ``Mutation`` of the driver-mode flag, so a client can show the switch flipped at once
/// and send it through an `OptimisticResource`; the server may still switch the mode off again
/// later on its own (after inactivity).
public struct DriverModeChange: Mutation, Hashable {
    /// Whether driver mode should be on.
    public var on: Bool

    /// A change to `on`.
    public init(on: Bool) {
        self.on = on
    }

    /// Sets the flag, as the server will.
    public func apply(to value: inout Bool) {
        value = on
    }
}
