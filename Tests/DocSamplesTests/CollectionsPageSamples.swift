import Foundation
import Observation
import StateLoopCollections
import StateLoopSyncTransports

/// The samples of `Sources/StateLoopCollections/StateLoopCollections.docc/StateLoopCollections.md`:
/// compiled.
enum CollectionsPageSamples {
    struct TaskRow: Codable, Sendable {
        var id: String
        var projectID: String
        var position: Double
        var done: Bool
    }

    enum TaskMutation: RowMutation {
        case move(String, to: Double)

        func apply(to rows: inout RowEdits<TaskRow>) {
            switch self {
            case .move(let id, let position): rows[id]?.position = position
            }
        }
    }

    static func declaration() -> RowCollection<TaskRow> {
        // Sources/StateLoopCollections/StateLoopCollections.docc/StateLoopCollections.md:
        let tasks = RowCollection("tasks", of: TaskRow.self) { $0.id }
            .field("projectID") { $0.projectID }
            .field("position") { $0.position }
            .field("done") { $0.done }
        // End of the example.
        return tasks
    }

    static func device(folder: String, server: SyncEndpoint, id: String, taskID: String, show: (LiveRows<TaskRow>) -> Void) async throws {
        let tasks = declaration()
        // Sources/StateLoopCollections/StateLoopCollections.docc/StateLoopCollections.md:
        let store = try LocalStore(path: folder + "/tasks.sqlite")
        let board = store.collection(tasks, mutations: TaskMutation.self, send: server.rowMutations(at: "/tasks"))
        let subscription = board.subscribe(server.rows(at: "/tasks", query: "byProject", parameters: ["projectID": id], as: TaskRow.self))
        let open = board.live(RowQuery(where: [.init("projectID", equals: .text(id))], orderedBy: [.init("position")]))
        try board.mutate(.move(taskID, to: 3))  // on screen at once, sent in order, once
        for await rows in open.updates() { show(rows) }
        subscription.stop()
        // End of the example.
    }

    @MainActor
    static func screen(open: LiveQuery<TaskRow>, draw: @escaping @Sendable () -> Void) {
        // Sources/StateLoopCollections/StateLoopCollections.docc/StateLoopCollections.md:
        let observed = open.observed()  // on the main actor; a SwiftUI view keeps it in @State
        withObservationTracking {
            _ = observed.rows  // what a view's body reads
        } onChange: {
            draw()  // SwiftUI draws the view again
        }
        // End of the example.
    }
}
