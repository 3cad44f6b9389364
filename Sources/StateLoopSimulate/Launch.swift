import Foundation
import StateLoopSimulation
import StateLoopSync
import StateLoopSyncTransports
import Synchronization

/// One client's device: the disk its app's mutation store keeps, which outlives a kill, and
/// the app's launches, the running one last.
final class Device: Sendable {
    let number: Int
    let disk: SimulatedDisk
    let launches = Mutex<[Launch]>([])

    init(number: Int, keepsValue: Bool) {
        self.number = number
        disk = SimulatedDisk(keepsValue: keepsValue)
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
    init(_ launch: Int, of device: Device, simulation: Simulation, network: SimulatedNetwork, server: any ListBackend) {
        let clientID = ClientID(rawValue: "client\(device.number)-\(launch)")
        let (pushes, delivery) = AsyncStream.makeStream(of: PushMessage<[String]>.self)
        let name = "client \(device.number) (launch \(launch))"
        let policy = SimulatedNetwork.policy
        let remote: RemoteResource<[String]>
        let resource: OptimisticResource<Append>
        if let kit = server as? KitListServer {
            // The app as it would be written: one endpoint for the server, one call for the
            // resource, its mutations and its push socket.
            let endpoint = SyncEndpoint(
                server: URL(string: "http://kit.simulated")!, bearerToken: "device\(device.number)", policy: policy,
                reconnectBackoff: .seconds(1), clock: network.clock, transport: kit.transport(for: device.number, network: network))
            resource = endpoint.optimisticResource(at: "/list", for: Append.self, store: device.disk.store(), clientID: clientID)
            remote = resource.resource
        } else if let server = server as? ListServer {
            let pull: @Sendable () async throws -> Versioned<[String]> = {
                try await network.travel()
                try network.lose(oneIn: 10)
                return try await server.value(for: clientID, on: device.number)
            }
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
            remote = RemoteResource(sources: ResourceSources(pull: pull, push: pushes), policy: policy, clock: network.clock)
            resource = OptimisticResource(
                resource: remote, store: device.disk.store(), clientID: clientID, policy: policy, clock: network.clock, send: send)
        } else {
            preconditionFailure("no server of the scenario's is a \(type(of: server))")
        }
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
        let failures = resource.refusals()
        watcher = Task {
            var problems: [String] = []
            // The server refuses no append: a failure reported is a change the user was told
            // failed (one the server may hold).
            async let refused = failures.reduce(into: [String]()) { problems, failure in
                problems.append("step \(simulation.step): \(name) was told \(failure.mutation?.text ?? "\(failure.id)") failed: \(failure.error)")
            }
            var confirmed = Version(counter: 0)
            for await status in resource.updates() {
                simulation.record(
                    "\(name) shows \(status.value ?? []) over \(status.confirmed?.version.counter ?? 0), to send: \(status.delivery)")
                if let shown = status.value, Set(shown).count != shown.count {
                    problems.append("step \(simulation.step): \(name) shows an append twice: \(shown)")
                }
                guard let version = status.confirmed?.version else { continue }
                if version < confirmed {
                    problems.append("step \(simulation.step): \(name)'s confirmed value went back from \(confirmed.counter) to \(version.counter)")
                }
                confirmed = max(confirmed, version)
            }
            return problems + (await refused)
        }
    }

    /// Stops both resources (the remote one is the app's to stop) and closes the push channel.
    func stop() {
        resource.stop()
        remote.stop()
        delivery.finish()
    }
}
