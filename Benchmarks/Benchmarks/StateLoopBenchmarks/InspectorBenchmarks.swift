import Benchmark
import BenchmarkSupport
import Foundation
import StateLoop
import StateLoopInspector
import StateLoopInspectorServer

#if canImport(FoundationNetworking)
    import FoundationNetworking
#endif

/// What the inspector costs a system: `System.send` of the "System: 0 feedbacks, 1 observer"
/// benchmark, with an inspector monitor attached, first with no inspector to send to, then
/// connected to a real `stateloop-inspector` server on loopback in this process (its encoding
/// and sending run on other threads, on the same 2 cores). And a burst of 100,000 events while
/// connected: how many reached the inspector and how many the app's buffer dropped.
func registerInspectorBenchmarks() {
    Benchmark(
        "Inspector: attached, not connected, 0 feedbacks, 1 observer",
        closure: { benchmark, fixture in
            await fixture.send(events: benchmark.scaledIterations.count)
        },
        setup: { await InspectedFixture(connectedTo: nil) }
    )

    let connected = FixtureBox<InspectedFixture>()
    let server = FixtureBox<InspectorServer>()
    Benchmark(
        "Inspector: attached and connected, 0 feedbacks, 1 observer",
        closure: { benchmark, _ in
            await connected.current?.send(events: benchmark.scaledIterations.count)
        },
        setup: {
            let started = server.set(try await InspectedFixture.startServer())
            connected.set(try await InspectedFixture.connected(to: started))
        },
        teardown: {
            await connected.take()?.disconnect()
            await server.take()?.stop()
        }
    )

    let burst = FixtureBox<InspectorServer>()
    Benchmark(
        "Inspector: a burst of 100,000 events, connected",
        configuration: .init(
            metrics: [.wallClock, InspectorMetric.reached, InspectorMetric.dropped],
            warmupIterations: 0,
            scalingFactor: .one,
            maxDuration: .seconds(60),
            maxIterations: 5
        ),
        closure: { benchmark, _ in
            guard let server = burst.current else { return }
            // A new app per iteration, so that each burst is counted on its own.
            let fixture = try await InspectedFixture.connected(to: server)
            let started = ContinuousClock.now
            await fixture.send(events: 100_000)
            benchmark.stopMeasurement()
            // What reached the inspector, once nothing more arrives (at most 30 s).
            let counts = try await fixture.settledCounts(on: server, since: started)
            benchmark.measurement(InspectorMetric.reached, counts.reached)
            benchmark.measurement(InspectorMetric.dropped, counts.dropped)
            await fixture.disconnect()
        },
        setup: { burst.set(try await InspectedFixture.startServer()) },
        teardown: { await burst.take()?.stop() }
    )
}

enum InspectorMetric {
    static let reached = BenchmarkMetric.custom("Events that reached the inspector", useScalingFactor: false)
    static let dropped = BenchmarkMetric.custom("Events the app's buffer dropped", useScalingFactor: false)
}

@BenchActor
final class InspectedFixture {
    private let system: System<Counter, CounterEvent>
    private let observed: ObservedCount
    private let subscription: StateSubscription
    private let inspector: Inspector

    init(connectedTo url: String?) {
        // The default capacity: 10,000 records kept, the oldest going first.
        inspector = Inspector(app: "bench")
        let monitor = inspector.monitor(named: "counter", of: Counter.self, CounterEvent.self)
        system = System(initialState: Counter(), reduce: Counter.reduce, monitor: monitor)
        monitor.attach(to: system)
        let observed = ObservedCount()
        self.observed = observed
        subscription = system.observe { state in observed.last = state.count }
        if let url { inspector.connect(to: url) }
    }

    static func startServer() async throws -> InspectorServer {
        let server = try InspectorServer(configuration: .init(port: 0, recordsPerApp: 200_000))
        try await server.start()
        return server
    }

    /// A fixture connected to `server`, once the inspector has welcomed it.
    static func connected(to server: InspectorServer) async throws -> InspectedFixture {
        guard let url = server.appURL else { throw SetupFailure(message: "the inspector is not running") }
        let fixture = InspectedFixture(connectedTo: url)
        let deadline = ContinuousClock.now + .seconds(10)
        while !fixture.inspector.isConnected {
            guard ContinuousClock.now < deadline else { throw SetupFailure(message: "the inspector never welcomed the app") }
            try await Task.sleep(for: .milliseconds(5))
        }
        return fixture
    }

    func send(events: Int) {
        for _ in 0..<events {
            system.send(.increment)
        }
        precondition(observed.last == system.state.count, "the observer missed a state")
    }

    func disconnect() {
        inspector.disconnect()
        system.stop()
    }

    /// The events of this fixture's app that reached `server`, and those its buffer dropped,
    /// once the app's last record arrived (or 30 s passed).
    func settledCounts(on server: InspectorServer, since: ContinuousClock.Instant) async throws -> (reached: Int, dropped: Int) {
        let session = inspector.sessionID
        let last = UInt64(1 + system.state.count)  // the attached record, then one per event
        var counts = (reached: 0, dropped: 0)
        let deadline = ContinuousClock.now + .seconds(30)
        while ContinuousClock.now < deadline {
            guard let url = server.pageURL.flatMap({ URL(string: $0.replacingOccurrences(of: "/?token=", with: "/apps?token=")) }) else { break }
            let (data, _) = try await URLSession.shared.data(from: url)
            let apps = try JSONDecoder().decode([AppCounts].self, from: data)
            if let app = apps.first(where: { $0.session == session }) {
                counts = (Int(app.lastSequence) - 1 - app.droppedByApp, app.droppedByApp)
                if app.lastSequence >= last { break }
            }
            try await Task.sleep(for: .milliseconds(20))
        }
        return counts
    }

    private struct AppCounts: Decodable {
        let session: String
        let lastSequence: UInt64
        let droppedByApp: Int
    }
}
