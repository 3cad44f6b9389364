/// One value the server owns: a resource's name and the key of one of its values, such as
/// `driver-mode/ann` or `ride/4f2a`.
///
/// Keys are what the store versions and what push sockets follow: every value of every
/// resource has its own version counter (see ``ServerStore``).
public struct ResourceKey: Hashable, Sendable, CustomStringConvertible {
    /// The resource's name, as declared in ``ServerResource``.
    public var resource: String
    /// The value's key within the resource: a user id for per-user resources, a fixed string
    /// for a shared value.
    public var id: String

    /// A key from its parts.
    public init(resource: String, id: String) {
        self.resource = resource
        self.id = id
    }

    /// `resource/id`.
    public var description: String {
        "\(resource)/\(id)"
    }
}
