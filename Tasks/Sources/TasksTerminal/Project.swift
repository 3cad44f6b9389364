import TasksModel

/// A project the user belongs to, as the board lists it.
public struct Project: Sendable, Hashable, Identifiable {
    /// The project's id (`p1`).
    public var id: String
    /// Its name, for the header.
    public var name: String

    /// A project from its parts.
    public init(id: String, name: String) {
        self.id = id
        self.name = name
    }

    /// The project of `membership`.
    public init(_ membership: Membership) {
        self.init(id: membership.projectID, name: membership.projectName)
    }
}
