import StateLoopWire

/// What a user does to tasks: the same type is applied on the device (shown at once) and by
/// the server (checked, then written).
public enum TaskMutation: RowMutation, Hashable {
    /// A new task.
    case add(TaskItem)
    case rename(id: String, title: String)
    case move(id: String, to: TaskItem.Status, position: Double)
    case assign(id: String, to: String?)
    case prioritize(id: String, priority: Int)
    /// Into another project: off the boards of those who are not its members.
    case transfer(id: String, to: String)
    case delete(id: String)

    /// The task it is about.
    public var taskID: String {
        switch self {
        case .add(let task): task.id
        case .rename(let id, _), .move(let id, _, _), .assign(let id, _), .prioritize(let id, _), .transfer(let id, _), .delete(let id): id
        }
    }

    public func apply(to rows: inout RowEdits<TaskItem>) {
        switch self {
        case .add(let task): rows[task.id] = task
        case .rename(let id, let title): rows[id]?.title = title
        case .move(let id, let status, let position):
            rows[id]?.status = status
            rows[id]?.position = position
        case .assign(let id, let user): rows[id]?.assignee = user
        case .prioritize(let id, let priority): rows[id]?.priority = min(3, max(1, priority))
        case .transfer(let id, let project): rows[id]?.projectID = project
        case .delete(let id): rows[id] = nil
        }
    }
}
