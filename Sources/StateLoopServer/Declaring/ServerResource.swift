/// A kind of versioned value that the server owns, declared once by the app:
///
/// ```swift
/// let driverMode = ServerResource("driver-mode", of: Bool.self)
/// ```
///
/// Each key of a resource (``key(_:)``) holds one value with its own version. Values are stored
/// as their JSON, so a resource's `Value` is the type clients decode.
public struct ServerResource<Value: Codable & Sendable>: Sendable {
    /// The name the store keeps the values under. Changing it orphans the stored values.
    public let name: String

    /// Declares the resource `name`, whose values are `Value`s.
    public init(_ name: String, of type: Value.Type = Value.self) {
        self.name = name
    }

    /// The key of this resource's value `id`.
    public func key(_ id: String) -> ResourceKey {
        ResourceKey(resource: name, id: id)
    }
}
