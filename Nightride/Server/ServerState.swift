import Foundation
import Logging
import NightrideModel
import StateLoopWire

/// Everything the server guards with its one lock: the core, the push sockets and the counters.
/// Pushes are queued while the lock is held, so each socket gets a user's changes in version
/// order whatever the interleaving of requests.
struct ServerState: Sendable {
    var core: NightrideCore
    var faultPlan: FaultPlan?
    var faultsEnabled: Bool
    /// While set, the network is "cut": every request is refused and every socket closed.
    var isNetworkCut = false
    /// Cleared while the server stops: a socket whose upgrade was under way when the others
    /// were closed is closed as it registers, or the graceful shutdown would wait for it.
    var acceptsSockets = true
    var stats = ServerStats()
    private var sockets: [SocketKey: [Int: Socket]] = [:]
    private var connections: [SocketKey: Int] = [:]
    private var nextSocketID = 0

    init(core: NightrideCore, faultPlan: FaultPlan?, faultsEnabled: Bool) {
        self.core = core
        self.faultPlan = faultPlan
        self.faultsEnabled = faultsEnabled
    }

    /// Whose resource a socket follows.
    struct SocketKey: Hashable, Sendable {
        var user: String
        var resource: Resource
    }

    /// One connected socket: its outgoing queue and its ordinal among the connections of the
    /// same user and resource (which fault decisions are keyed on).
    struct Socket: Sendable {
        var connection: Int
        /// The reading client's id, whose `lastMutationID` each message carries.
        var client: String?
        var outbox: AsyncStream<String>.Continuation
    }

    var activeFaults: FaultPlan? {
        faultsEnabled ? faultPlan : nil
    }

    /// Counts a request of `route`; returns its number (from 1), which fault decisions use.
    mutating func countRequest(_ route: String) -> Int {
        stats.requests[route, default: 0] += 1
        return stats.requests[route]!
    }

    /// Registers a socket and queues the resource's current value on it first, so a client that
    /// connects late still starts from the truth. Returns the socket's id and connection ordinal.
    mutating func connect(_ key: SocketKey, client: String?, outbox: AsyncStream<String>.Continuation) -> (id: Int, connection: Int) {
        nextSocketID += 1
        connections[key, default: 0] += 1
        let connection = connections[key]!
        // Upgraded just before the network was cut or the server began to stop: closed at once.
        guard acceptsSockets, !isNetworkCut else {
            outbox.finish()
            return (nextSocketID, connection)
        }
        sockets[key, default: [:]][nextSocketID] = Socket(connection: connection, client: client, outbox: outbox)
        stats.openSockets += 1
        if let message = currentMessage(for: key, client: client) {
            outbox.yield(message)
            stats.pushesSent += 1
        }
        return (nextSocketID, connection)
    }

    mutating func disconnect(_ key: SocketKey, id: Int) {
        guard let socket = sockets[key]?.removeValue(forKey: id) else { return }
        socket.outbox.finish()
        stats.openSockets -= 1
    }

    /// Ends the queues of `user`'s sockets: they reconnect, and learn whether their token
    /// still works.
    mutating func disconnect(user: String) {
        for (key, group) in sockets where key.user == user {
            for id in group.keys { disconnect(key, id: id) }
        }
    }

    /// Ends every socket's queue, which makes its handler return and close the connection.
    mutating func disconnectAll() {
        for (key, group) in sockets {
            for id in group.keys { disconnect(key, id: id) }
        }
    }

    /// Pushes the change-log records from `start` on to the sockets of their user and resource.
    mutating func publish(from start: Int, logger: Logger) {
        let records = core.changeLog.records
        guard start < records.count else { return }
        let faults = activeFaults
        // Indices and locals rather than a loop over a slice of records: Swift 6.3.1's
        // optimizer crashes (copy propagation) on the slice form of this loop in release builds.
        for index in start..<records.count {
            let user = records[index].user
            let resource = records[index].resource
            let version = records[index].version
            let key = SocketKey(user: user, resource: resource)
            guard let group = sockets[key] else { continue }
            // Most sockets of a user share a message; one that names a client with mutations
            // gets that client's lastMutationID in its own.
            var messages: [UInt64?: String] = [:]
            // Each socket drains its own queue and the drop decision is keyed by connection, so
            // the order sockets are visited in does not matter.
            for socket in group.values {
                let lastMutationID = core.lastMutationID(of: user, client: socket.client)
                guard let message = messages[lastMutationID] ?? Self.message(for: records[index].value, version: version, lastMutationID: lastMutationID) else { continue }
                messages[lastMutationID] = message
                if let faults, faults.dropsPush(of: version, resource: resource, user: user, connection: socket.connection) {
                    stats.pushesDropped += 1
                    logger.debug("push dropped", metadata: ["user": "\(user)", "resource": "\(resource)", "version": "\(version)"])
                    continue
                }
                socket.outbox.yield(message)
                stats.pushesSent += 1
                if let faults, faults.addsHint(after: version, resource: resource, user: user, connection: socket.connection) {
                    socket.outbox.yield(#"{"changed":true}"#)
                    stats.extraHints += 1
                }
            }
        }
    }

    private func currentMessage(for key: SocketKey, client: String?) -> String? {
        let lastMutationID = core.lastMutationID(of: key.user, client: client)
        switch key.resource {
        case .driverMode:
            return core.driverMode(of: key.user).flatMap { JSON.string(Versioned($0.value, version: $0.version, lastMutationID: lastMutationID)) }
        case .ride:
            return core.rideStatus(of: key.user).flatMap { JSON.string(Versioned($0.value, version: $0.version, lastMutationID: lastMutationID)) }
        }
    }

    private static func message(for value: ResourceValue, version: Version, lastMutationID: UInt64?) -> String? {
        switch value {
        case .driverMode(let on): JSON.string(Versioned(on, version: version, lastMutationID: lastMutationID))
        case .ride(let status): JSON.string(Versioned(status, version: version, lastMutationID: lastMutationID))
        }
    }
}
