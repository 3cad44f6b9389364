import StateLoop
import StateLoopTesting
import Testing

@testable import StateLoopSync

/// Whatever happened before, a resource with a subscriber, online and not failed, keeps
/// pulling: random runs of hints, pushes, failures, answers, flaps and refreshes, then a quiet
/// server, and the poll must come back. The chaos run found one state that stopped it for good
/// (a retry left behind a successful request); this test searches for others.
@Suite("remote resource liveness")
struct ResourceLivenessTests {
    @Test("after any run of hints, failures, answers and flaps, a quiet server is polled again or the failure is shown")
    func pollingComesBack() async {
        // One seed after the other: two hundred test systems at once would starve the suite's
        // real-time tests of threads.
        for seed in UInt64(0)..<200 {
            await run(seed: seed)
        }
    }

    private func run(seed: UInt64) async {
        // The honesty suite's scripted server and store, polling, with short deadlines.
        let fixture = ResourceHonestyTests()
        let (clock, server) = (fixture.clock, fixture.server)
        let store = await fixture.makeStore { policy in
            policy.pollInterval = .seconds(5)
            policy.requestTimeout = .seconds(3)
            policy.maxBackoff = .seconds(2)
        }
        await store.send(.subscribed)
        var random = SplitMix(seed: seed)
        var version: UInt64 = 1
        var steps: [String] = []
        for _ in 0..<40 {
            let step = random.next() % 10
            steps.append(String(step))
            switch step {
            case 0: await store.send(.refresh)
            case 1: server.pushHint()
            case 2: server.pushFailure(TransportError())
            case 3: server.setOnline(false)
            case 4: server.setOnline(true)
            case 5: server.fail(TransportError())
            case 6:
                version += 1
                server.answer("v", version: version)
            case 7:
                version += 1
                server.push("v", version: version)
            default: await clock.advance(by: .milliseconds(Int64(random.next() % 1_500)))
            }
            await store.settle()
        }
        // The server is quiet and well from now on: online, answering every pull.
        server.setOnline(true)
        await store.settle()
        let before = server.pullCount
        for _ in 0..<20 {
            await clock.advance(by: .seconds(1))
            server.answerAll("v", version: version)
            await store.settle()
        }
        let state = await store.state
        #expect(
            state.failure != nil || server.pullCount >= before + 3,
            "seed \(seed): \(server.pullCount - before) pulls in 20 quiet seconds, state \(state), steps \(steps.joined())"
        )
        await store.finish()
    }
}

/// A small seeded generator, so that a failing seed replays the same run.
struct SplitMix {
    private var state: UInt64

    init(seed: UInt64) {
        state = seed
    }

    mutating func next() -> UInt64 {
        state &+= 0x9E37_79B9_7F4A_7C15
        var z = state
        z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
        z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
        return z ^ (z >> 31)
    }
}
