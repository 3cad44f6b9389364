import StateLoopWire

/// One task of a project's board.
public struct TaskItem: Codable, Sendable, Hashable, Identifiable {
    /// Where a task stands.
    public enum Status: String, Codable, Sendable, CaseIterable, FieldValueConvertible {
        case todo
        case doing
        case done

        public var fieldValue: FieldValue { .text(rawValue) }
    }

    /// The task's id, made by the device that created it.
    public var id: String
    /// The project it belongs to: moving it to another moves it off the boards of that
    /// project's non-members.
    public var projectID: String
    public var title: String
    public var status: Status
    /// The member it is assigned to, if any.
    public var assignee: String?
    /// 1 (highest) to 3.
    public var priority: Int
    /// Its place in its column; a board sorts by it.
    public var position: Double

    /// A task from its parts.
    public init(
        id: String, projectID: String, title: String, status: Status = .todo, assignee: String? = nil, priority: Int = 2, position: Double
    ) {
        self.id = id
        self.projectID = projectID
        self.title = title
        self.status = status
        self.assignee = assignee
        self.priority = priority
        self.position = position
    }
}

/// A user's membership of a project: what decides which tasks the user sees.
public struct Membership: Codable, Sendable, Hashable, Identifiable {
    /// `<project>:<user>`.
    public var id: String
    public var projectID: String
    /// The project's name, for the user's list of projects.
    public var projectName: String
    public var user: String

    /// The membership of `user` in `projectID`.
    public init(projectID: String, projectName: String, user: String) {
        self.id = "\(projectID):\(user)"
        self.projectID = projectID
        self.projectName = projectName
        self.user = user
    }
}
