import HTTPTypes
import StateLoopServer
import StateLoopServerTesting
import StateLoopWire
import Synchronization

/// The fault plan applied to the pushes of a StateLoopServer: upgrades refused while the network
/// is cut, pushes lost or followed by a hint, sockets cut when their lease runs out.
///
/// Decisions are the plan's (``FaultPlan/dropsPush(of:resource:user:connection:)`` and the
/// like), keyed by the socket's ordinal among the sockets of its user and resource, so the same
/// seed meets the same trouble whatever the interleaving. Whether the plan applies, and whether
/// the network is cut, is read at each decision, so switching faults off takes effect at once.
final class FaultPlanPushes: PushFaults {
    /// The plan, whether it applies, and the counters.
    private let switches: Switches
    private let connections = Mutex<[ResourceKey: Int]>([:])

    init(switches: Switches) {
        self.switches = switches
    }

    func refusal(of key: ResourceKey) -> HTTPResponse.Status? {
        switches.count { $0.requests["GET /me/\(key.resource)/push", default: 0] += 1 }
        return switches.withLock { $0.isNetworkCut } ? .serviceUnavailable : nil
    }

    func socket(following key: ResourceKey) -> any PushSocketFaults {
        let connection = connections.withLock { connections in
            connections[key, default: 0] += 1
            return connections[key]!
        }
        // Without a plan that cuts sockets, no task per socket waits to cut it.
        let mayCut = switches.withLock { $0.faultPlan?.disconnectAfter } != nil && UserValue(rawValue: key.resource) != nil
        return Socket(user: key.id, resource: UserValue(rawValue: key.resource), connection: connection, mayCut: mayCut, plan: self)
    }

    /// One socket's trouble.
    private struct Socket: PushSocketFaults {
        let user: String
        /// `nil` for a resource that is not one of Nightride's two: never troubled.
        let resource: UserValue?
        let connection: Int
        let mayCut: Bool
        let plan: FaultPlanPushes

        func fate(of version: Version) -> PushFate {
            guard let resource, let faults = plan.switches.activeFaults else {
                plan.switches.count { $0.pushesSent += 1 }
                return .send
            }
            if faults.dropsPush(of: version, resource: resource, user: user, connection: connection) {
                plan.switches.count { $0.pushesDropped += 1 }
                return .drop
            }
            plan.switches.count { $0.pushesSent += 1 }
            guard faults.addsHint(after: version, resource: resource, user: user, connection: connection) else { return .send }
            plan.switches.count { $0.extraHints += 1 }
            return .sendWithHint
        }

        /// Returns once the socket's lease runs out with faults on. While faults are off it looks
        /// again every second, so that switching them on takes effect.
        func cut() async {
            guard let resource else { return await Self.never() }
            var round = 0
            while !Task.isCancelled {
                round += 1
                let lease = plan.switches.activeFaults?.disconnectDelay(user: user, resource: resource, connection: connection, round: round)
                do {
                    try await plan.switches.sleep(lease ?? .seconds(1))
                } catch {
                    return
                }
                guard lease != nil, plan.switches.activeFaults?.disconnectAfter != nil else { continue }
                plan.switches.count { $0.forcedDisconnects += 1 }
                return
            }
        }

        private static func never() async {
            while !Task.isCancelled {
                try? await Task.sleep(for: .seconds(3_600))
            }
        }
    }
}
