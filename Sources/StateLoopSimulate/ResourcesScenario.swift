import StateLoopSimulation
import StateLoopSync

/// Clients following one value over a lossy, reordering network, on simulated time: the
/// server changes the value now and then for a minute, pushes each version to every client
/// (each copy delayed on its own, so that they overtake one another, and some lost), and
/// answers pulls late or not at all. Each client is a real `RemoteResource`. Checked: no
/// client ever shows an older version than it showed (never an older screen), and every
/// client shows the server's last version within a minute after the changes stop, or shows
/// that it failed.
struct ResourcesScenario {
    let clients: Int

    /// What went wrong in one run, described; empty when nothing did.
    func run(_ simulation: Simulation) async -> [String] {
        let clock = SimulationClock()
        let network = SimulatedNetwork(simulation: simulation, clock: clock)
        let server = ValueServer()
        let policy = SimulatedNetwork.policy
        var resources: [RemoteResource<Int>] = []
        var watchers: [Task<[String], Never>] = []
        for client in 0..<clients {
            let (pushes, delivery) = AsyncStream.makeStream(of: PushMessage<Int>.self)
            await server.subscribe(delivery)
            let pull: @Sendable () async throws -> Versioned<Int> = {
                try await network.travel()
                try network.lose(oneIn: 10)
                return await server.value
            }
            let resource = RemoteResource(sources: ResourceSources(pull: pull, push: pushes), policy: policy, clock: clock)
            resources.append(resource)
            watchers.append(
                Task {
                    var problems: [String] = []
                    var shown = Version(counter: 0)
                    for await value in resource.values() {
                        simulation.record("client \(client) shows \(value.version.counter)")
                        if value.version < shown {
                            problems.append("step \(simulation.step): client \(client) went back from \(shown.counter) to \(value.version.counter)")
                        }
                        shown = max(shown, value.version)
                    }
                    return problems
                })
        }
        // A minute of changes, each pushed to every client with its own delay; some are lost.
        let changes = Task {
            while clock.now.offset < .seconds(60) {
                try? await clock.sleep(for: .milliseconds(100 + simulation.random(in: 0..<2_000)))
                let value = await server.change()
                for delivery in await server.deliveries { network.push(.value(value), to: delivery) }
            }
        }
        await changes.value
        try? await clock.sleep(for: .seconds(60))
        let last = await server.value
        var problems: [String] = []
        for (client, resource) in resources.enumerated() {
            let status = await resource.updates().first { _ in true }
            // A resource whose pulls failed past its retries stops polling and says so
            // (`failure`): a screen that shows its failure is not a stale one passed off as
            // current. Four pulls lost in a row, then the pushes after them, do it.
            if status?.value?.version != last.version, status?.failure == nil {
                problems.append(
                    "client \(client) shows \(status?.value?.version.counter ?? 0), the server holds \(last.version.counter): "
                        + "loading \(status?.isLoading ?? false), retrying \(status?.isRetrying ?? false), "
                        + "failure \(status?.failure.map { "\($0)" } ?? "none")")
            }
            resource.stop()
        }
        for delivery in await server.deliveries { delivery.finish() }
        for watcher in watchers { problems += await watcher.value }
        return problems
    }
}

/// The server's value and the push channels to its clients.
actor ValueServer {
    private(set) var value = Versioned(0, version: Version(counter: 1))
    private(set) var deliveries: [AsyncStream<PushMessage<Int>>.Continuation] = []

    func subscribe(_ delivery: AsyncStream<PushMessage<Int>>.Continuation) {
        deliveries.append(delivery)
    }

    /// A new value, one version later.
    func change() -> Versioned<Int> {
        value = Versioned(value.value + 1, version: Version(counter: value.version.counter + 1))
        return value
    }
}
