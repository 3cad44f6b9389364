import StateLoopSimulation
import StateLoopSync
import Synchronization

/// Clients appending to one shared list through real `OptimisticResource`s, over a network that
/// loses requests before the server and answers after it, and goes away for up to 30 seconds:
/// the server applies a mutation id once however often it comes (as the kit does), and each new
/// list is pushed to every client, each copy delayed on its own and some lost. Half the clients'
/// apps are killed once, at any step of the first minute, and launched again at once from what
/// their disk holds (``SimulatedDisk``); a request already on its way when the app died still
/// reaches the server. Half the clients' sessions expire once in the first minute: the server
/// answers 401 and pushes nothing to them until the app, seeing the resource unauthorized,
/// signs in again one to ten seconds later and refreshes.
///
/// The faults stop at 90 s (the appends, kills and expiries all come in the first minute);
/// from then on nothing is lost. Checked at every status a client publishes: no append shown
/// twice. Checked two minutes after the faults stop (past a mutation's longest backoff, 30 s,
/// and several polls): every append a client's disk ever held is in the server's list, each
/// append at most once, each client's in the order it made them (nothing lost, nothing applied
/// twice, in order); every client's last launch shows the server's list with nothing left to
/// send; and within a launch no client's confirmed value ever went back.
struct MutationsScenario {
    let clients: Int
    /// How many appends each client makes.
    let appends = 4
    /// When the faults stop.
    static let calm = Duration.seconds(90)

    func run(_ simulation: Simulation) async -> [String] {
        let clock = SimulationClock()
        let server = ListServer()
        // An outage: for some seconds of the first minute, every request fails.
        let outageStart = Duration.milliseconds(simulation.random(in: 5_000..<40_000))
        let outage = outageStart..<(outageStart + .milliseconds(simulation.random(in: 2_000..<30_000)))
        let network = SimulatedNetwork(simulation: simulation, clock: clock, outage: outage, calmFrom: Self.calm)
        let devices = (0..<clients).map { Device(number: $0) }
        for device in devices {
            let launch = Launch(0, of: device, simulation: simulation, network: network, server: server)
            device.launches.withLock { $0.append(launch) }
            await server.subscribe(launch.clientID, launch.delivery)
        }
        await withTaskGroup(of: Void.self) { group in
            // Each client appends now and then during the first minute.
            for device in devices {
                group.addTask {
                    for number in 0..<appends {
                        try? await clock.sleep(for: .milliseconds(simulation.random(in: 0..<15_000)))
                        // In one step with the launch it goes to: a kill never falls between.
                        let resource = device.launches.withLock { $0.last!.resource }
                        simulation.record("client \(device.number) appends \(number)")
                        _ = resource.mutate(Append(text: "\(device.number).\(number)"))
                    }
                }
            }
            // Half the sessions expire once.
            for device in devices where simulation.random(in: 0..<2) == 0 {
                group.addTask {
                    try? await clock.sleep(for: .milliseconds(simulation.random(in: 0..<60_000)))
                    simulation.record("client \(device.number)'s session expires")
                    await server.expire(device.number)
                }
            }
            // Half the apps are killed once, and launched again.
            for device in devices where simulation.random(in: 0..<2) == 0 {
                group.addTask {
                    try? await clock.sleep(for: .milliseconds(simulation.random(in: 0..<60_000)))
                    let (killed, launch) = device.launches.withLock { launches in
                        let killed = launches.last!
                        device.disk.kill()
                        killed.stop()
                        let launch = Launch(launches.count, of: device, simulation: simulation, network: network, server: server)
                        launches.append(launch)
                        return (killed, launch)
                    }
                    simulation.record("client \(device.number) killed and launched again")
                    await server.unsubscribe(killed.clientID)
                    await server.subscribe(launch.clientID, launch.delivery)
                }
            }
        }
        try? await clock.sleep(until: SimulationClock.Instant(offset: Self.calm + .seconds(120)), tolerance: nil)
        let list = await server.list
        var problems: [String] = []
        for device in devices {
            let client = device.number
            let mine = list.filter { $0.hasPrefix("\(client).") }
            let made = (0..<appends).map { "\(client).\($0)" }
            let kept = device.disk.everHeld
            if Set(mine).count != mine.count || mine != made.filter(mine.contains) || !kept.isSubset(of: mine) {
                problems.append("client \(client)'s appends in the server's list: \(mine), made: \(made), its disk held: \(kept.sorted())")
            }
        }
        for device in devices {
            let launches = device.launches.withLock { $0 }
            let resource = launches.last!.resource
            let status = await resource.updates().first { _ in true }
            if status?.delivery != .idle {
                problems.append(
                    "client \(device.number) still has \(status?.delivery.count ?? 0) to send: \(status.map { "\($0.delivery)" } ?? "no status")")
            } else if status?.value != list, status?.resource.failure == nil {
                problems.append("client \(device.number) shows \(status?.value ?? []), the server holds \(list)")
            }
            launches.last!.stop()
            for launch in launches {
                problems += await launch.watcher.value
                await launch.signer.value
            }
        }
        await server.finish()
        return problems
    }
}

/// One client's device: the disk its app's mutation store keeps, which outlives a kill, and
/// the app's launches, the running one last.
final class Device: Sendable {
    let number: Int
    let disk = SimulatedDisk()
    let launches = Mutex<[Launch]>([])

    init(number: Int) {
        self.number = number
    }
}

/// One launch of a client's app: its remote and optimistic resources, under a client id of its
/// own, over the scenario's network, with a watcher of what it shows.
final class Launch: Sendable {
    let clientID: ClientID
    let remote: RemoteResource<[String]>
    let resource: OptimisticResource<Append>
    let delivery: AsyncStream<PushMessage<[String]>>.Continuation
    /// The problems seen in the statuses this launch published.
    let watcher: Task<[String], Never>
    /// Signs in again when the resource says its session was refused, as an app asks its user.
    let signer: Task<Void, Never>

    /// Launch number `launch` of `device`'s app.
    init(_ launch: Int, of device: Device, simulation: Simulation, network: SimulatedNetwork, server: ListServer) {
        let clientID = ClientID(rawValue: "client\(device.number)-\(launch)")
        let (pushes, delivery) = AsyncStream.makeStream(of: PushMessage<[String]>.self)
        let pull: @Sendable () async throws -> Versioned<[String]> = {
            try await network.travel()
            try network.lose(oneIn: 10)
            return try await server.value(for: clientID, on: device.number)
        }
        let name = "client \(device.number) (launch \(launch))"
        let send: @Sendable (Append, MutationID) async throws -> Version = { append, id in
            simulation.record("\(name) sends \(append.text) as \(id)")
            try await network.travel()
            try network.lose(oneIn: 8)
            let (version, pushes) = try await server.apply(append, id: id, on: device.number)
            simulation.record("server has \(append.text) at \(version.counter)")
            // Each reader's copy of the new list, delayed on its own, some lost.
            for (delivery, message) in pushes { network.push(message, to: delivery) }
            try await network.travel()
            // Applied, and the answer lost on its way back: the client sends it again.
            try network.lose(oneIn: 8)
            simulation.record("\(name) hears \(append.text) is at \(version.counter)")
            return version
        }
        let policy = SimulatedNetwork.policy
        let remote = RemoteResource(sources: ResourceSources(pull: pull, push: pushes), policy: policy, clock: network.clock)
        let resource = OptimisticResource(
            resource: remote, store: device.disk.store(), clientID: clientID, policy: policy, clock: network.clock, send: send)
        self.clientID = clientID
        self.remote = remote
        self.resource = resource
        self.delivery = delivery
        signer = Task {
            for await status in remote.updates() where status.isUnauthorized {
                try? await network.clock.sleep(for: .milliseconds(simulation.random(in: 1_000..<10_000)))
                simulation.record("\(name) signs in again")
                await server.signIn(device.number)
                remote.refresh()
            }
        }
        watcher = Task {
            var problems: [String] = []
            var confirmed = Version(counter: 0)
            for await status in resource.updates() {
                simulation.record(
                    "\(name) shows \(status.value ?? []) over \(status.confirmed?.version.counter ?? 0), to send: \(status.delivery)")
                if let shown = status.value, Set(shown).count != shown.count {
                    problems.append("\(name) shows an append twice: \(shown)")
                }
                guard let version = status.confirmed?.version else { continue }
                if version < confirmed {
                    problems.append("\(name)'s confirmed value went back from \(confirmed.counter) to \(version.counter)")
                }
                confirmed = max(confirmed, version)
            }
            return problems
        }
    }

    /// Stops both resources (the remote one is the app's to stop) and closes the push channel.
    func stop() {
        resource.stop()
        remote.stop()
        delivery.finish()
    }
}

/// What a device's disk holds for its app's mutation store: the queue and the confirmed value
/// as last saved. A kill is instant: what the killed launch saves after it is never written,
/// and the next launch reads what was saved before it.
final class SimulatedDisk: Sendable {
    private struct Contents {
        var queue: [PendingMutation<Append>] = []
        var confirmed: Versioned<[String]>?
        /// Which launch may write: a killed one's saves are dropped.
        var launch = 0
        /// The text of every append a save ever held.
        var everHeld: Set<String> = []
    }

    private let contents = Mutex(Contents())

    /// The store of the launch running now.
    func store() -> Store {
        Store(disk: self, launch: contents.withLock { $0.launch })
    }

    /// Kills the running launch: nothing it saves from now on is kept.
    func kill() {
        contents.withLock { $0.launch += 1 }
    }

    /// The text of every append a save ever held: what a launch must not lose.
    var everHeld: Set<String> {
        contents.withLock { $0.everHeld }
    }

    /// One launch's mutation store on the disk.
    struct Store: MutationStore {
        let disk: SimulatedDisk
        let launch: Int

        func load() async throws -> [PendingMutation<Append>] {
            disk.contents.withLock { $0.queue }
        }

        func save(_ queue: [PendingMutation<Append>]) async throws {
            disk.contents.withLock { contents in
                guard contents.launch == launch else { return }
                contents.queue = queue
                contents.everHeld.formUnion(queue.map(\.mutation.text))
            }
        }

        func loadConfirmed() async throws -> Versioned<[String]>? {
            disk.contents.withLock { $0.confirmed }
        }

        func saveConfirmed(_ value: Versioned<[String]>) async throws {
            disk.contents.withLock { contents in
                guard contents.launch == launch else { return }
                contents.confirmed = value
            }
        }
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
    /// The devices whose session expired and that have not signed in since.
    private var expired: Set<Int> = []

    /// Ends `device`'s session: its requests are answered 401 and nothing is pushed to it.
    func expire(_ device: Int) {
        expired.insert(device)
    }

    /// A new session for `device`.
    func signIn(_ device: Int) {
        expired.remove(device)
    }

    private func checkSession(of device: Int) throws(HTTPStatusError) {
        if expired.contains(device) { throw HTTPStatusError(status: 401) }
    }

    func subscribe(_ client: ClientID, _ delivery: AsyncStream<PushMessage<[String]>>.Continuation) {
        deliveries.append((client, delivery))
    }

    /// Forgets `client`'s push channel (its app was killed).
    func unsubscribe(_ client: ClientID) {
        deliveries.removeAll { $0.client == client }
    }

    /// The list as `client` reads it, with the last of its mutations applied.
    func value(for client: ClientID) -> Versioned<[String]> {
        Versioned(list, version: version, lastMutationID: lastApplied[client.rawValue])
    }

    /// The list as `client` reads it on `device`, whose session must hold.
    func value(for client: ClientID, on device: Int) throws(HTTPStatusError) -> Versioned<[String]> {
        try checkSession(of: device)
        return value(for: client)
    }

    /// Applies `append` unless `id` was applied already: the version it was applied at, and
    /// the pushes to send (none for a repeat).
    func apply(
        _ append: Append, id: MutationID, on device: Int
    ) throws(HTTPStatusError) -> (Version, [(AsyncStream<PushMessage<[String]>>.Continuation, PushMessage<[String]>)]) {
        try checkSession(of: device)
        if let known = applied[id.rawValue] { return (known, []) }
        append.apply(to: &list)
        version = Version(counter: version.counter + 1)
        applied[id.rawValue] = version
        // Under the client that numbered it, as the kit keeps it: a mutation a killed launch
        // queued counts for that launch's client, whichever launch sent it.
        if let (sender, sequence) = id.parts { lastApplied[sender.rawValue] = sequence }
        let readers = deliveries.filter { !expired.contains(Self.device(of: $0.client)) }
        return (version, readers.map { ($0.delivery, .value(value(for: $0.client))) })
    }

    /// The device a launch's client id (`client<device>-<launch>`) belongs to.
    private static func device(of client: ClientID) -> Int {
        Int(client.rawValue.dropFirst("client".count).prefix { $0 != "-" }) ?? -1
    }

    func finish() {
        for (_, delivery) in deliveries { delivery.finish() }
    }
}
