import Foundation
import StateLoopCollections
import StateLoopSync
import StateLoopWire

/// Tasks in projects, as both sides of the collection tests declare them.
enum Board {
    struct TaskRow: Codable, Sendable, Hashable {
        var id: String
        var projectID: String
        var title: String
        var position: Int
        var done: Bool = false
    }

    static let tasks = RowCollection("tasks", of: TaskRow.self) { $0.id }
        .field("projectID") { $0.projectID }
        .field("position") { $0.position }
        .field("done") { $0.done }

    /// The app's changes to tasks.
    enum TaskMutation: RowMutation, Equatable {
        case put(TaskRow)
        case rename(id: String, title: String)
        case delete(id: String)

        func apply(to rows: inout RowEdits<TaskRow>) {
            switch self {
            case .put(let task): rows[task.id] = task
            case .rename(let id, let title): rows[id]?.title = title
            case .delete(let id): rows[id] = nil
            }
        }
    }

    /// A project's tasks by position.
    static func project(_ id: String, limit: Int? = nil) -> RowQuery {
        RowQuery(where: [.init("projectID", equals: .text(id))], orderedBy: [.init("position")], limit: limit)
    }

    static func task(_ id: String, in project: String = "p1", at position: Int, title: String? = nil) -> TaskRow {
        TaskRow(id: id, projectID: project, title: title ?? id, position: position)
    }

    /// `rows` at `counter` as a server sends them.
    static func versioned(_ rows: [TaskRow], counter: UInt64 = 1) -> [VersionedRow<TaskRow>] {
        rows.map { VersionedRow(id: $0.id, version: Version(epoch: 1, counter: counter), value: $0) }
    }

    /// A cookie of epoch 1 at `position`.
    static func cookie(_ position: UInt64) -> String {
        "1.\(position).00000000000000aa"
    }
}
