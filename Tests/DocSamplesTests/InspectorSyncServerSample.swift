import StateLoopInspector
import StateLoopInspectorSyncServer
import StateLoopServer

/// The server sample of `Sources/StateLoopInspector/StateLoopInspector.docc/LiveInspection.md`:
/// compiled.
enum InspectorSyncServerSample {
    static func sample<Access: AccessPolicy>(server: SyncServer<Access>) -> Inspector {
        // Sources/StateLoopInspector/StateLoopInspector.docc/LiveInspection.md:
        let inspector = Inspector(app: "Rides server", redacting: ["password", "token"])
        inspector.connect(to: "ws://127.0.0.1:7357/app?token=…")
        inspector.watch(server)
        // End of the example.
        return inspector
    }
}
