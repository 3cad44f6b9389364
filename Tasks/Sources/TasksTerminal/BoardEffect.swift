import TasksModel

/// What the core asks the session to do with the client: its only output besides the state.
public enum BoardEffect: Sendable, Hashable {
    /// Stop the board's live query and make one of `query` (none when `nil`), tagging its
    /// deliveries with `generation`.
    case watch(BoardQuery?, generation: Int)
    /// Make the change (`TasksClient.mutate`).
    case mutate(TaskMutation)
    /// Add a task titled `title` at the end of `projectID`'s board, with `status`.
    case add(title: String, projectID: String, status: TaskItem.Status)
    /// Read the row `taskID` as the device holds it, and answer with ``BoardEvent/fetched(id:_:)``.
    case fetch(taskID: String)
    /// Stop: the live queries, then the host.
    case quit
}
