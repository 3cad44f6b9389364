import TasksModel

/// What the board shows: one project's tasks, perhaps of one status, perhaps one assignee's.
/// The session makes it a live query with `TasksClient.board(_:status:assignee:)`, again
/// whenever it changes.
public struct BoardQuery: Sendable, Hashable {
    /// The project.
    public var projectID: String
    /// Only tasks of this status, when set.
    public var status: TaskItem.Status?
    /// Only tasks assigned to this user, when set.
    public var assignee: String?

    /// A query from its parts.
    public init(projectID: String, status: TaskItem.Status? = nil, assignee: String? = nil) {
        self.projectID = projectID
        self.status = status
        self.assignee = assignee
    }
}
