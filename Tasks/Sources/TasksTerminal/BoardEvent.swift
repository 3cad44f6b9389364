import TasksModel

/// What happens to the board: a key, or news from the client. The core's only input.
public enum BoardEvent: Sendable, Hashable {
    /// The user pressed a key.
    case key(Key)
    /// The user's projects, as the projects' live query delivered them.
    case projects([Project])
    /// The rows of the board's live query of `generation` (``BoardState/generation``).
    case tasks([TaskItem], generation: Int)
    /// The task ``BoardEffect/add(title:projectID:status:)`` added.
    case added(TaskItem)
    /// The row of `id` as the device holds it (pending changes on top), or `nil` when it holds
    /// none: the answer to ``BoardEffect/fetch(taskID:)``.
    case fetched(id: String, TaskItem?)
    /// How the device stands with the server.
    case sync(SyncInfo)
    /// The server refused a change: what it said, for the user.
    case refused(String)
    /// Something the session did for the core failed: why, for the user.
    case failed(String)
    /// The process is asked to stop (a signal, or the keys' input closed).
    case stop
}
