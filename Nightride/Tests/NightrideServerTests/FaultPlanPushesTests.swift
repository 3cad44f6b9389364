@testable import NightrideServer
import StateLoopServer
import StateLoopServerTesting
import StateLoopTesting
import StateLoopWire
import Synchronization
import TestSupport
import Testing

/// The fault plan as the kit's push faults: the plan's own decisions, per socket ordinal.
@Suite("Nightride fault plan on the kit's pushes")
struct FaultPlanPushesTests {
    @Test("pushes are dropped and hinted as the plan decides for each socket's ordinal; nothing happens with faults off or the network whole")
    func decisions() {
        let plan = FaultPlan(seed: 7, pushDropProbability: 0.3, hintProbability: 0.3)
        let harness = Harness(plan: plan)
        let key = ResourceKey(resource: "ride", id: "ann")
        #expect(harness.pushes.refusal(of: key) == nil)
        harness.cut.withLock { $0 = true }
        #expect(harness.pushes.refusal(of: key) == .serviceUnavailable)

        let first = harness.pushes.socket(following: key)
        let second = harness.pushes.socket(following: key)
        let other = harness.pushes.socket(following: ResourceKey(resource: "ride", id: "bob"))
        for counter in 1...200 as ClosedRange<UInt64> {
            let version = Version(epoch: 1, counter: counter)
            for (socket, user, connection) in [(first, "ann", 1), (second, "ann", 2), (other, "bob", 1)] {
                let expected: PushFate = if plan.dropsPush(of: version, resource: .ride, user: user, connection: connection) {
                    .drop
                } else if plan.addsHint(after: version, resource: .ride, user: user, connection: connection) {
                    .sendWithHint
                } else {
                    .send
                }
                #expect(socket.fate(of: version) == expected, "\(user) #\(connection) v\(counter)")
            }
        }
        let stats = harness.stats.withLock { $0 }
        #expect(stats.pushesDropped > 0 && stats.extraHints > 0 && stats.pushesSent + stats.pushesDropped == 600)

        harness.enabled.withLock { $0 = false }
        #expect((1...50 as ClosedRange<UInt64>).allSatisfy { first.fate(of: Version(epoch: 1, counter: $0)) == .send })
    }

    @Test("only a plan that cuts sockets gives a socket a task to cut it: none without one, none for another resource")
    func mayCut() {
        let key = ResourceKey(resource: "driver-mode", id: "ann")
        #expect(Harness(plan: FaultPlan(seed: 1, disconnectAfter: .seconds(2)...(.seconds(2)))).pushes.socket(following: key).mayCut)
        #expect(!Harness(plan: FaultPlan(seed: 1, disconnectAfter: nil)).pushes.socket(following: key).mayCut)
        let cutting = Harness(plan: FaultPlan(seed: 1)).pushes
        #expect(!cutting.socket(following: ResourceKey(resource: "history", id: "ann")).mayCut)
    }

    @Test("a socket is cut when its lease runs out with faults on, not while they are off")
    func cuts() async {
        let clock = TestClock()
        let harness = Harness(plan: FaultPlan(seed: 1, disconnectAfter: .seconds(2)...(.seconds(2))), clock: clock)
        harness.enabled.withLock { $0 = false }
        let socket = harness.pushes.socket(following: ResourceKey(resource: "driver-mode", id: "ann"))
        let ended = Flag()
        let task = Task {
            await socket.cut()
            ended.set()
        }
        func sleeping() async {
            #expect(await eventually(within: .seconds(10)) { clock.sleeperCount >= 1 }, "the socket's watch is asleep on the clock")
        }
        // Faults off: it looks again every second and keeps the socket.
        for _ in 1...5 {
            await sleeping()
            await clock.advance(by: .seconds(1))
        }
        await sleeping()
        #expect(!ended.isSet)
        // On: the second that was running ends without a lease, then a 2 s lease runs out.
        harness.enabled.withLock { $0 = true }
        await clock.advance(by: .seconds(1))
        await sleeping()
        await clock.advance(by: .seconds(2))
        #expect(await eventually(within: .seconds(10)) { ended.isSet }, "cut once a lease ran out with faults on")
        #expect(harness.stats.withLock { $0.forcedDisconnects } == 1)
        task.cancel()
    }

    /// A FaultPlanPushes with switches a test flips, and the counters it keeps.
    final class Harness: Sendable {
        let enabled = Mutex(true)
        let cut = Mutex(false)
        let stats = Mutex(ServerStats())
        let plan: FaultPlan
        private let clock: TestClock

        init(plan: FaultPlan, clock: TestClock = TestClock()) {
            self.plan = plan
            self.clock = clock
        }

        var pushes: FaultPlanPushes {
            memoized.withLock { existing in
                if let existing { return existing }
                let made = FaultPlanPushes(
                    plan: { [plan] in plan },
                    activeFaults: { [unowned self] in enabled.withLock { $0 } ? plan : nil },
                    isNetworkCut: { [unowned self] in cut.withLock { $0 } },
                    sleep: { [clock] in try await clock.sleep(for: $0) },
                    count: { [unowned self] change in stats.withLock { change(&$0) } }
                )
                existing = made
                return made
            }
        }

        private let memoized = Mutex<FaultPlanPushes?>(nil)
    }
}

/// A flag set by one task and read by another.
final class Flag: Sendable {
    private let value = Mutex(false)
    func set() { value.withLock { $0 = true } }
    var isSet: Bool { value.withLock { $0 } }
}
