import StateLoop
import StateLoopInspector

/// The README's inspector example, compiled.
enum ReadmeInspector {
    struct RideState: Codable, Sendable {
        static func reduce(_ state: inout RideState, _ event: RideEvent) {}
    }

    enum RideEvent: Codable, Sendable {
        case requested
    }

    @MainActor
    static func sample(feedbacks: [Feedback<RideState, RideEvent>]) {
        // README.md:
        let inspector = Inspector(app: "Rides", redacting: ["password", "token"])
        inspector.connect(to: "ws://127.0.0.1:7357/app?token=…")
        let monitor = inspector.monitor(named: "rides", of: RideState.self, RideEvent.self)
        let system = System(initialState: RideState(), reduce: RideState.reduce, feedbacks: feedbacks, monitor: monitor)
        monitor.attach(to: system)
        // End of the example.
    }
}
