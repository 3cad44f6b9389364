import StateLoop
import StateLoopTesting
import Testing

@testable import StateLoopSync

/// Whatever happened before, a queue of mutations empties once the server is well: random runs
/// of mutations, answers, lost answers, refusals, 401s, new sessions and values, then a quiet
/// server that answers every send and pushes its newest value, and nothing may stay pending.
@Suite("optimistic mutations, liveness")
struct MutationLivenessTests {
    @Test("after any run of answers, refusals, 401s and sign-ins, a well server empties the queue")
    func queueEmpties() async {
        // One seed after the other: two hundred test systems at once would starve the suite's
        // real-time tests of threads.
        for seed in UInt64(0)..<200 {
            await run(seed: seed)
        }
    }

    private func run(seed: UInt64) async {
        // The honesty suite's scripted server, resource statuses and store, with the deadlines
        // short enough for a run to cross several.
        let fixture = MutationHonestyTests()
        let (clock, server, client, statuses) = (fixture.clock, fixture.server, fixture.client, fixture.statuses)
        let store = await fixture.makeStore { policy in
            policy.requestTimeout = .seconds(3)
            policy.maxBackoff = .seconds(2)
        }
        await store.send(.restored([], confirmed: nil))
        var random = SplitMix(seed: seed)
        var version: UInt64 = 1
        var session: UInt64 = 0
        var sequence: UInt64 = 0
        func status(unauthorized: Bool = false) -> ResourceStatus<[String]> {
            var status = ResourceStatus(value: Versioned(["ann"], version: Version(counter: version)))
            status.session = session
            if unauthorized { status.failure = ResourceFailure(HTTPStatusError(status: 401), kind: .unauthorized) }
            return status
        }
        statuses.continuation.yield(status())
        var steps: [String] = []
        for _ in 0..<40 {
            let step = random.next() % 10
            steps.append(String(step))
            switch step {
            case 0:
                sequence += 1
                await store.send(.mutate(PendingMutation(.add("m\(sequence)"), id: MutationID(client: client, sequence: sequence))))
            case 1:
                version += 1
                server.acknowledge(version: version)
            case 2: server.refuse(HTTPStatusError(status: 503))
            case 3: server.refuse(HTTPStatusError(status: 409))
            case 4: server.refuse(HTTPStatusError(status: 401))
            case 5: server.refuse(TransportError())
            case 6:
                version += 1
                statuses.continuation.yield(status())
            case 7: statuses.continuation.yield(status(unauthorized: true))
            case 8:
                session += 1
                statuses.continuation.yield(status())
            default: await clock.advance(by: .milliseconds(Int64(random.next() % 2_500)))
            }
            await store.settle()
        }
        // Signed in again, and the server is well from now on: it answers every send and
        // pushes its newest value each second.
        session += 1
        statuses.continuation.yield(status())
        await store.settle()
        for _ in 0..<60 {
            await clock.advance(by: .seconds(1))
            while !server.inFlight.isEmpty {
                version += 1
                server.acknowledge(version: version)
                await store.settle()
            }
            statuses.continuation.yield(status())
            await store.settle()
        }
        let state = await store.state
        #expect(
            state.queue.isEmpty,
            "seed \(seed): \(state.queue.map { "\($0.id.rawValue) \($0.status)" }), attempt \(String(describing: state.attempt)), blocked \(String(describing: state.blockedSession)), steps \(steps.joined())"
        )
        await store.finish()
    }
}
