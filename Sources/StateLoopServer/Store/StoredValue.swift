import Foundation
import StateLoopWire

/// A value as the store keeps it: its key, its version and its JSON.
public struct StoredValue: Sendable, Hashable {
    /// Whose value it is.
    public var key: ResourceKey
    /// The version the store allocated when the value was written.
    public var version: Version
    /// The value's JSON, as its resource's `Value` encodes it.
    public var json: Data

    /// A stored value from its parts.
    public init(key: ResourceKey, version: Version, json: Data) {
        self.key = key
        self.version = version
        self.json = json
    }
}
