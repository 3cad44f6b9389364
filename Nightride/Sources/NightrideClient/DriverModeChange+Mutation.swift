import NightrideModel
import StateLoopSync

extension DriverModeChange: Mutation {
    /// Sets the flag, as the server will.
    public func apply(to value: inout Bool) {
        value = on
    }
}
