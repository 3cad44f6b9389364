import StateLoopWire

/// The collections of Tasks, declared once for the server and the clients.
public enum TasksCollections {
    /// Every task, by id; queries filter on project, status and assignee, and sort by
    /// position.
    public static let tasks = RowCollection("tasks", of: TaskItem.self) { $0.id }
        .field("projectID") { $0.projectID }
        .field("status") { $0.status }
        .field("assignee") { $0.assignee }
        .field("priority") { $0.priority }
        .field("position") { $0.position }

    /// Who belongs to which project.
    public static let memberships = RowCollection("memberships", of: Membership.self) { $0.id }
        .field("projectID") { $0.projectID }
        .field("user") { $0.user }

    /// The paths the server serves them at.
    public enum Path {
        public static let tasks = "/tasks"
        public static let memberships = "/memberships"
        public static let login = "/login"
    }

    /// The names of the server's queries.
    public enum Query {
        /// Tasks of every project the user belongs to.
        public static let myTasks = "mine"
        /// Tasks of one project (`projectID`), for its members.
        public static let projectTasks = "byProject"
        /// The user's memberships.
        public static let myMemberships = "mine"
    }

    /// A board's tasks in one project, by position; optionally one status, one assignee.
    public static func board(_ projectID: String, status: TaskItem.Status? = nil, assignee: String? = nil) -> RowQuery {
        var conditions = [RowCondition("projectID", equals: .text(projectID))]
        if let status { conditions.append(RowCondition("status", equals: status.fieldValue)) }
        if let assignee { conditions.append(RowCondition("assignee", equals: .text(assignee))) }
        return RowQuery(where: conditions, orderedBy: [RowOrder("position")])
    }
}
