import StateLoopSimulation
import StateLoopSync

/// Clients appending to one shared list through real `OptimisticResource`s, over a network that
/// loses requests before the server and answers after it, and goes away for up to 30 seconds: the server applies a mutation id
/// once however often it comes (as the kit does), and each new list is pushed to every client,
/// each copy delayed on its own and some lost. Checked, three minutes after the last change: every
/// client's appends are in the server's list once each, in the order the client made them
/// (nothing lost, nothing applied twice, in order); every client shows the server's list with
/// nothing left to send; and no client's confirmed value ever went back.
struct MutationsScenario {
    let clients: Int
    /// How many appends each client makes.
    let appends = 4

    func run(_ simulation: Simulation) async -> [String] {
        let clock = SimulationClock()
        let server = ListServer()
        let policy = SimulatedNetwork.policy
        // An outage: for some seconds of the first minute, every request fails.
        let outageStart = Duration.milliseconds(simulation.random(in: 5_000..<40_000))
        let outage = outageStart..<(outageStart + .milliseconds(simulation.random(in: 2_000..<30_000)))
        let network = SimulatedNetwork(simulation: simulation, clock: clock, outage: outage)
        var resources: [OptimisticResource<Append>] = []
        var remotes: [RemoteResource<[String]>] = []
        var watchers: [Task<[String], Never>] = []
        for client in 0..<clients {
            let clientID = ClientID(rawValue: "client\(client)")
            let (pushes, delivery) = AsyncStream.makeStream(of: PushMessage<[String]>.self)
            await server.subscribe(clientID, delivery)
            let pull: @Sendable () async throws -> Versioned<[String]> = {
                try await network.travel()
                try network.lose(oneIn: 10)
                return await server.value(for: clientID)
            }
            let send: @Sendable (Append, MutationID) async throws -> Version = { append, id in
                try await network.travel()
                try network.lose(oneIn: 8)
                let (version, pushes) = await server.apply(append, id: id, from: clientID)
                // Each reader's copy of the new list, delayed on its own, some lost.
                for (delivery, message) in pushes { network.push(message, to: delivery) }
                try await network.travel()
                // Applied, and the answer lost on its way back: the client sends it again.
                try network.lose(oneIn: 8)
                return version
            }
            let remote = RemoteResource(sources: ResourceSources(pull: pull, push: pushes), policy: policy, clock: clock)
            let resource = OptimisticResource(resource: remote, clientID: clientID, policy: policy, clock: clock, send: send)
            resources.append(resource)
            remotes.append(remote)
            watchers.append(
                Task {
                    var problems: [String] = []
                    var confirmed = Version(counter: 0)
                    for await status in resource.updates() {
                        guard let version = status.confirmed?.version else { continue }
                        if version < confirmed {
                            problems.append("client \(client)'s confirmed value went back from \(confirmed.counter) to \(version.counter)")
                        }
                        confirmed = max(confirmed, version)
                    }
                    return problems
                })
        }
        // Each client appends now and then during the first minute.
        await withTaskGroup(of: Void.self) { group in
            for (client, resource) in resources.enumerated() {
                group.addTask {
                    for number in 0..<appends {
                        try? await clock.sleep(for: .milliseconds(simulation.random(in: 0..<15_000)))
                        simulation.record("client \(client) appends \(number)")
                        _ = resource.mutate(Append(text: "\(client).\(number)"))
                    }
                }
            }
        }
        // Three minutes: past the outage, a mutation's backoff (at most 30 s) and a few lost
        // attempts after it.
        try? await clock.sleep(for: .seconds(180))
        let list = await server.list
        var problems: [String] = []
        for client in 0..<clients {
            let mine = list.filter { $0.hasPrefix("\(client).") }
            let made = (0..<appends).map { "\(client).\($0)" }
            if mine != made { problems.append("client \(client)'s appends in the server's list: \(mine), made: \(made)") }
        }
        for (client, resource) in resources.enumerated() {
            let status = await resource.updates().first { _ in true }
            if status?.delivery != .idle {
                problems.append(
                    "client \(client) still has \(status?.delivery.count ?? 0) to send: \(status.map { "\($0.delivery)" } ?? "no status")")
            } else if status?.value != list, status?.resource.failure == nil {
                problems.append("client \(client) shows \(status?.value ?? []), the server holds \(list)")
            }
            // The remote resource under it is the app's to stop.
            resource.stop()
            remotes[client].stop()
        }
        await server.finish()
        for watcher in watchers { problems += await watcher.value }
        return problems
    }
}

/// Appends `text` to the list.
struct Append: Mutation {
    typealias Value = [String]
    let text: String

    func apply(to value: inout [String]) {
        value.append(text)
    }
}

/// The server's list, the mutations it applied (by id: applied once), and each client's push
/// channel.
actor ListServer {
    private(set) var list: [String] = []
    private var version = Version(counter: 1)
    private var applied: [String: Version] = [:]
    /// The last sequence applied per client: its `lastMutationID`.
    private var lastApplied: [String: UInt64] = [:]
    private var deliveries: [(client: ClientID, delivery: AsyncStream<PushMessage<[String]>>.Continuation)] = []

    func subscribe(_ client: ClientID, _ delivery: AsyncStream<PushMessage<[String]>>.Continuation) {
        deliveries.append((client, delivery))
    }

    /// The list as `client` reads it, with the last of its mutations applied.
    func value(for client: ClientID) -> Versioned<[String]> {
        Versioned(list, version: version, lastMutationID: lastApplied[client.rawValue])
    }

    /// Applies `append` unless `id` was applied already: the version it was applied at, and
    /// the pushes to send (none for a repeat).
    func apply(
        _ append: Append, id: MutationID, from client: ClientID
    ) -> (Version, [(AsyncStream<PushMessage<[String]>>.Continuation, PushMessage<[String]>)]) {
        if let known = applied[id.rawValue] { return (known, []) }
        append.apply(to: &list)
        version = Version(counter: version.counter + 1)
        applied[id.rawValue] = version
        if let sequence = id.parts?.sequence { lastApplied[client.rawValue] = sequence }
        return (version, deliveries.map { ($0.delivery, .value(value(for: $0.client))) })
    }

    func finish() {
        for (_, delivery) in deliveries { delivery.finish() }
    }
}
