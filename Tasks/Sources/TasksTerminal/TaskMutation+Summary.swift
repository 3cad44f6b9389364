import TasksModel

extension TaskMutation {
    /// What the change does, in a few words, for the status line when the server refuses it.
    var summary: String {
        switch self {
        case .add(let task): "adding “\(TerminalText.sanitized(task.title))”"
        case .rename(_, let title): "renaming a task to “\(TerminalText.sanitized(title))”"
        case .move(_, let status, _): "moving a task to \(status.rawValue)"
        case .assign(_, let user): user.map { "assigning a task to \(TerminalText.sanitized($0))" } ?? "unassigning a task"
        case .prioritize(_, let priority): "setting a task's priority to \(priority)"
        case .transfer(_, let project): "moving a task to project \(TerminalText.sanitized(project))"
        case .delete: "deleting a task"
        }
    }
}
