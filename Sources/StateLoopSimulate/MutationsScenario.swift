import StateLoopSimulation
import StateLoopSync
import Synchronization

/// Clients appending to one shared list through real `OptimisticResource`s, over a network that
/// loses requests before the server and answers after it, and goes away for up to 30 seconds:
/// the server applies a mutation id once however often it comes (as the kit does), and each new
/// list is pushed to every client, each copy delayed on its own and some lost. Half the clients'
/// apps are killed once, at any step of the first minute, and launched again at once from what
/// their disk holds (``SimulatedDisk``, which for half the clients keeps the queue alone, no
/// value); a request already on its way when the app died still
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
///
/// With ``kit``, the server is the server kit itself (``KitListServer``), with its push sockets,
/// and its process crashes once in half the runs, starting again on the same store.
struct MutationsScenario {
    let clients: Int
    /// Whether the server is the server kit rather than the scenario's own actor.
    var kit = false
    /// How many appends each client makes.
    let appends = 4
    /// When the faults stop.
    static let calm = Duration.seconds(90)

    func run(_ simulation: Simulation) async -> [String] {
        let clock = SimulationClock()
        let server: any ListBackend
        do {
            server = kit ? try await KitListServer.start(clock: clock) : ListServer()
        } catch {
            return ["the server did not start: \(error)"]
        }
        // An outage: for some seconds of the first minute, every request fails.
        let outageStart = Duration.milliseconds(simulation.random(in: 5_000..<40_000))
        let outage = outageStart..<(outageStart + .milliseconds(simulation.random(in: 2_000..<30_000)))
        let network = SimulatedNetwork(simulation: simulation, clock: clock, outage: outage, calmFrom: Self.calm)
        let devices = (0..<clients).map { Device(number: $0, keepsValue: simulation.random(in: 0..<2) == 0) }
        for device in devices {
            let launch = Launch(0, of: device, simulation: simulation, network: network, server: server)
            device.launches.withLock { $0.append(launch) }
            await server.subscribe(launch.clientID, on: device.number, launch.delivery)
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
            // The server kit's process crashes once in half the runs, and is up again one to
            // five seconds later on the same store.
            if let kit = server as? KitListServer, simulation.random(in: 0..<2) == 0 {
                group.addTask {
                    try? await clock.sleep(for: .milliseconds(simulation.random(in: 0..<60_000)))
                    simulation.record("the server crashes")
                    kit.crash()
                    try? await clock.sleep(for: .milliseconds(simulation.random(in: 1_000..<5_000)))
                    simulation.record("the server starts again")
                    await kit.restart()
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
                    await server.subscribe(launch.clientID, on: device.number, launch.delivery)
                }
            }
        }
        try? await clock.sleep(until: SimulationClock.Instant(offset: Self.calm + .seconds(120)), tolerance: nil)
        var problems: [String] = []
        let list: [String]
        do {
            list = try await server.list
        } catch {
            list = []
            problems.append("the server's list could not be read: \(error)")
        }
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

/// Appends `text` to the list.
struct Append: Mutation, Codable {
    typealias Value = [String]
    let text: String

    func apply(to value: inout [String]) {
        value.append(text)
    }
}
