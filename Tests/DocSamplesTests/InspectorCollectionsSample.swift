import StateLoopCollections
import StateLoopInspector
import StateLoopInspectorCollections
import StateLoopSyncTransports

/// The collection sample of `Sources/StateLoopInspector/StateLoopInspector.docc/LiveInspection.md`:
/// compiled.
enum InspectorCollectionsSample {
    typealias TaskMutation = CollectionsPageSamples.TaskMutation

    static func sample(store: LocalStore, server: SyncEndpoint) -> Inspector {
        let tasks = CollectionsPageSamples.declaration()
        // Sources/StateLoopInspector/StateLoopInspector.docc/LiveInspection.md:
        let inspector = Inspector(app: "Board")
        let board = store.collection(tasks, mutations: TaskMutation.self, send: server.rowMutations(at: "/tasks"))
        inspector.watch(board, named: "board")
        // End of the example.
        return inspector
    }
}
