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
    /// The plan if it applies now.
    private let activeFaults: @Sendable () -> FaultPlan?
    /// The plan, applied or not: whether sockets may be cut once faults are switched on.
    private let plan: @Sendable () -> FaultPlan?
    private let isNetworkCut: @Sendable () -> Bool
    private let sleep: @Sendable (Duration) async throws -> Void
    /// Adds to the server's counters.
    private let count: @Sendable (@Sendable (inout ServerStats) -> Void) -> Void
    /// Sockets opened so far per user and resource: the ordinal the next one gets is one more.
    private let connections = Mutex<[ResourceKey: Int]>([:])

    init(
        plan: @escaping @Sendable () -> FaultPlan?,
        activeFaults: @escaping @Sendable () -> FaultPlan?,
        isNetworkCut: @escaping @Sendable () -> Bool,
        sleep: @escaping @Sendable (Duration) async throws -> Void,
        count: @escaping @Sendable (@Sendable (inout ServerStats) -> Void) -> Void
    ) {
        self.plan = plan
        self.activeFaults = activeFaults
        self.isNetworkCut = isNetworkCut
        self.sleep = sleep
        self.count = count
    }

    func refusal(of key: ResourceKey) -> HTTPResponse.Status? {
        count { $0.requests["GET /me/\(key.resource)/push", default: 0] += 1 }
        return isNetworkCut() ? .serviceUnavailable : nil
    }

    func socket(following key: ResourceKey) -> any PushSocketFaults {
        let connection = connections.withLock { connections in
            connections[key, default: 0] += 1
            return connections[key]!
        }
        // Without a plan that cuts sockets, no task per socket waits to cut it.
        let mayCut = plan()?.disconnectAfter != nil && UserValue(rawValue: key.resource) != nil
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
            guard let resource, let faults = plan.activeFaults() else {
                plan.count { $0.pushesSent += 1 }
                return .send
            }
            if faults.dropsPush(of: version, resource: resource, user: user, connection: connection) {
                plan.count { $0.pushesDropped += 1 }
                return .drop
            }
            plan.count { $0.pushesSent += 1 }
            guard faults.addsHint(after: version, resource: resource, user: user, connection: connection) else { return .send }
            plan.count { $0.extraHints += 1 }
            return .sendWithHint
        }

        /// Returns once the socket's lease runs out with faults on. While faults are off it looks
        /// again every second, so that switching them on takes effect.
        func cut() async {
            guard let resource else { return await Self.never() }
            var round = 0
            while !Task.isCancelled {
                round += 1
                let lease = plan.activeFaults()?.disconnectDelay(user: user, resource: resource, connection: connection, round: round)
                do {
                    try await plan.sleep(lease ?? .seconds(1))
                } catch {
                    return
                }
                guard lease != nil, plan.activeFaults()?.disconnectAfter != nil else { continue }
                plan.count { $0.forcedDisconnects += 1 }
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
