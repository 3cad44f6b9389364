import TasksModel

/// Everything the terminal client shows, as a value: what the live queries delivered, where
/// the cursor is, which screen is up, the filters, the status line.
///
/// Changed only by ``BoardCore/reduce(_:_:)`` and drawn only by ``BoardRenderer``, so that
/// both are tested without a terminal, a server or a clock.
public struct BoardState: Sendable, Hashable {
    /// Which screen is up.
    public enum Screen: Sendable, Hashable {
        /// The columns of the selected project.
        case board
        /// One task's fields.
        case detail(taskID: String)
    }

    /// A line being edited, over the current screen.
    public struct Prompt: Sendable, Hashable {
        /// What the line is for.
        public enum Purpose: Sendable, Hashable {
            /// The title of a new task, added to the given column.
            case newTask(TaskItem.Status)
            /// A new title for the task.
            case rename(taskID: String)
        }

        /// What the line is for.
        public var purpose: Purpose
        /// The line.
        public var editor: LineEditor

        /// A prompt from its parts.
        public init(purpose: Purpose, editor: LineEditor) {
            self.purpose = purpose
            self.editor = editor
        }
    }

    /// The signed-in user.
    public var user: String
    /// The user's projects, as the server has them.
    public var projects: [Project] = []
    /// The project shown; `nil` until the user has one.
    public var projectID: String?
    /// Only tasks of this status, when set: the board then shows that column alone.
    public var statusFilter: TaskItem.Status?
    /// Only the user's own tasks, when set.
    public var mineOnly = false
    /// The query the shown tasks come from, and its generation: a delivery of an older one
    /// (still in flight when the filter changed) is ignored.
    public var watching: BoardQuery?
    /// Bumped whenever ``watching`` is made anew.
    public var generation = 0
    /// The rows of ``watching``, by position; empty until ``loaded``.
    public var tasks: [TaskItem] = []
    /// Whether ``watching`` delivered yet.
    public var loaded = false
    /// The column the cursor is in.
    public var column: TaskItem.Status = .todo
    /// The task under the cursor; kept while the cursor's column shows none, so that the
    /// cursor finds its task again when a filter that hid it is undone (``selectedTask`` is
    /// the task only when it is in the cursor's column).
    public var selectedID: String?
    /// The screen up.
    public var screen: Screen = .board
    /// The task the detail screen shows, as last seen (it may have left the board's query).
    public var detail: TaskItem?
    /// The line being edited, if any.
    public var prompt: Prompt?
    /// How the device stands with the server.
    public var sync = SyncInfo()
    /// A message for the status line, until the next key.
    public var message: String?
    /// Set once the user quits: the host then stops.
    public var quitting = false

    /// The first state of `user`'s board: nothing loaded yet.
    public init(user: String) {
        self.user = user
    }

    /// The columns shown: all three, or the one the status filter keeps.
    public var columns: [TaskItem.Status] {
        statusFilter.map { [$0] } ?? TaskItem.Status.allCases
    }

    /// The query the filters and the project ask for; `nil` without a project.
    public var query: BoardQuery? {
        projectID.map { BoardQuery(projectID: $0, status: statusFilter, assignee: mineOnly ? user : nil) }
    }

    /// The shown tasks of `status`, by position.
    public func tasks(in status: TaskItem.Status) -> [TaskItem] {
        tasks.filter { $0.status == status }
    }

    /// The task under the cursor, if it is in the cursor's column.
    public var selectedTask: TaskItem? {
        guard let selectedID else { return nil }
        return tasks.first { $0.id == selectedID && $0.status == column }
    }

    /// The shown project.
    public var project: Project? {
        projects.first { $0.id == projectID }
    }
}
