import StateLoopServer
import StateLoopServerTesting
import StateLoopTesting
import StateLoopWire
import Synchronization
import TestSupport
import Testing

@testable import NightrideHarness

/// The fault plan as the kit's push faults: the plan's own decisions, per socket ordinal.
@Suite("Nightride fault plan on the kit's pushes")
struct FaultPlanPushesTests {
    @Test("pushes are dropped and hinted as the plan decides for each socket's ordinal; nothing happens with faults off or the network whole")
    func decisions() {
        let plan = FaultPlan(seed: 7, pushDropProbability: 0.3, hintProbability: 0.3)
        let harness = Harness(plan: plan)
        let key = ResourceKey(resource: "ride", id: "ann")
        #expect(harness.pushes.refusal(of: key) == nil)
        harness.switches.withLock { $0.isNetworkCut = true }
        #expect(harness.pushes.refusal(of: key) == .serviceUnavailable)

        let first = harness.pushes.socket(following: key)
        let second = harness.pushes.socket(following: key)
        let other = harness.pushes.socket(following: ResourceKey(resource: "ride", id: "bob"))
        for counter in 1...200 as ClosedRange<UInt64> {
            let version = Version(epoch: 1, counter: counter)
            for (socket, user, connection) in [(first, "ann", 1), (second, "ann", 2), (other, "bob", 1)] {
                let expected: PushFate =
                    if plan.dropsPush(of: version, resource: .ride, user: user, connection: connection) {
                        .drop
                    } else if plan.addsHint(after: version, resource: .ride, user: user, connection: connection) {
                        .sendWithHint
                    } else {
                        .send
                    }
                #expect(socket.fate(of: version) == expected, "\(user) #\(connection) v\(counter)")
            }
        }
        let stats = harness.switches.withLock { $0.stats }
        #expect(stats.pushesDropped > 0 && stats.extraHints > 0 && stats.pushesSent + stats.pushesDropped == 600)

        harness.switches.withLock { $0.faultsEnabled = false }
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
        harness.switches.withLock { $0.faultsEnabled = false }
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
        harness.switches.withLock { $0.faultsEnabled = true }
        await clock.advance(by: .seconds(1))
        await sleeping()
        await clock.advance(by: .seconds(2))
        #expect(await eventually(within: .seconds(10)) { ended.isSet }, "cut once a lease ran out with faults on")
        #expect(harness.switches.withLock { $0.stats.forcedDisconnects } == 1)
        task.cancel()
    }

    /// A FaultPlanPushes on switches a test flips, which keep its counters.
    final class Harness: Sendable {
        let switches: Switches
        let pushes: FaultPlanPushes

        init(plan: FaultPlan, clock: TestClock = TestClock()) {
            switches = Switches(faultPlan: plan, faultsEnabled: true, sleep: { try await clock.sleep(for: $0) })
            pushes = FaultPlanPushes(switches: switches)
        }
    }
}

/// A flag set by one task and read by another.
final class Flag: Sendable {
    private let value = Mutex(false)
    func set() { value.withLock { $0 = true } }
    var isSet: Bool { value.withLock { $0 } }
}
