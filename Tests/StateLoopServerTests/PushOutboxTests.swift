import Foundation
import StateLoopWire
import Synchronization
import TestSupport
import Testing

@testable import StateLoopServer

@Suite("Push outbox")
struct PushOutboxTests {
    let key = ResourceKey(resource: "notes", id: "ann")

    func entry(_ counter: UInt64, _ lastMutationID: UInt64? = nil) -> PushOutbox.Entry {
        PushOutbox.Entry(
            value: StoredValue(key: key, version: Version(epoch: 1, counter: counter), json: Data("\(counter)".utf8)), lastMutationID: lastMutationID)
    }

    @Test("a reader that does not take keeps one value, the newest; only the first offer starts a writer")
    func coalesces() {
        let outbox = Outbox()
        #expect(outbox.offer(entry(1)) == (.queued, true))
        for counter in UInt64(2)...1_000 {
            #expect(outbox.offer(entry(counter)) == (.coalesced, false))
        }
        #expect(outbox.next() == .write(entry(1_000)))
        #expect(outbox.next() == .pause)
    }

    @Test("an offer older than what was queued or sent is dropped; the same version with a newer lastMutationID is not")
    func versionsOnlyForward() {
        let outbox = Outbox()
        #expect(outbox.offer(entry(5, 2)).offer == .queued)
        #expect(outbox.next() == .write(entry(5, 2)))
        #expect(outbox.offer(entry(4, 9)).offer == .outdated)
        #expect(outbox.offer(entry(5, 2)).offer == .outdated)
        #expect(outbox.offer(entry(5, 1)).offer == .outdated)
        #expect(outbox.offer(entry(5, 3)).offer == .queued)
        #expect(outbox.next() == .write(entry(5, 3)))
        // A later epoch is newer whatever its counter.
        let restored = PushOutbox.Entry(value: StoredValue(key: key, version: Version(epoch: 2, counter: 1), json: Data()), lastMutationID: nil)
        #expect(outbox.offer(restored).offer == .queued)
    }

    @Test("a writer at work is never started twice; one that paused is started by the next offer")
    func oneWriterAtATime() {
        let outbox = Outbox()
        #expect(outbox.offer(entry(1)).startWriter)
        #expect(outbox.next() == .write(entry(1)))
        // Still writing 1: a new offer waits for that writer, which is not told to pause.
        #expect(!outbox.offer(entry(2)).startWriter)
        #expect(outbox.next() == .write(entry(2)))
        #expect(outbox.next() == .pause)
        #expect(outbox.offer(entry(3)).startWriter)
    }

    @Test("close: what waits is written, then the writer is told to finish, once; an idle outbox starts a writer for it")
    func close() {
        let outbox = Outbox()
        _ = outbox.offer(entry(1))
        // The writer started by the offer is the one that finishes.
        #expect(!outbox.close())
        #expect(outbox.offer(entry(2)).offer == .closed)
        #expect(outbox.next() == .write(entry(1)))
        #expect(outbox.next() == .finish)
        #expect(outbox.next() == .pause)
        #expect(!outbox.close(discardingWaiting: true))

        let idle = Outbox()
        #expect(idle.close(discardingWaiting: true))
        #expect(idle.next() == .finish)

        let discarding = Outbox()
        _ = discarding.offer(entry(1))
        #expect(!discarding.close(discardingWaiting: true))
        #expect(discarding.next() == .finish)
    }

    @Test("abandon: nothing waits and no writer starts; a writer at work is told to finish")
    func abandon() {
        let idle = Outbox()
        idle.abandon()
        #expect(idle.offer(entry(1)) == (.closed, false))
        #expect(!idle.close())

        let writing = Outbox()
        _ = writing.offer(entry(1))
        _ = writing.offer(entry(2))
        writing.abandon()
        #expect(writing.next() == .finish)
    }

    @Test("offers racing a writer from four threads: one writer at a time, versions written in order, the newest never lost")
    func racingOffers() async {
        for _ in 0..<20 {
            let harness = OutboxHarness()
            await withTaskGroup(of: Void.self) { group in
                for _ in 0..<4 {
                    group.addTask {
                        for _ in 0..<500 { harness.offerNext(key: key) }
                    }
                }
            }
            let written = await harness.settled()
            #expect(harness.mostWritersAtOnce == 1)
            #expect(written == written.sorted() && Set(written).count == written.count)
            #expect(written.last == 2_000)
        }
    }
}

/// The state machine in a box, so that its mutating steps can be called inside `#expect`.
private final class Outbox {
    private var machine = PushOutbox()

    func offer(_ entry: PushOutbox.Entry) -> (offer: PushOutbox.Offer, startWriter: Bool) { machine.offer(entry) }
    func next() -> PushOutbox.Step { machine.next() }
    func close(discardingWaiting: Bool = false) -> Bool { machine.close(discardingWaiting: discardingWaiting) }
    func abandon() { machine.abandon() }
}

/// An outbox under a lock, as ``PushSocketWriter`` keeps it, with writer tasks that record what
/// they write.
private final class OutboxHarness: Sendable {
    private let outbox = Mutex(PushOutbox())
    private let counter = Mutex<UInt64>(0)
    private let written = Mutex<[UInt64]>([])
    private let writers = Atomic<Int>(0)
    private let most = Atomic<Int>(0)
    private let running = Atomic<Int>(0)

    var mostWritersAtOnce: Int { most.load(ordering: .sequentiallyConsistent) }

    /// Offers the next version (allocated under the same lock as the offer, as commits are).
    func offerNext(key: ResourceKey) {
        let startWriter = outbox.withLock { outbox in
            let version = counter.withLock {
                $0 += 1
                return $0
            }
            let value = StoredValue(key: key, version: Version(epoch: 1, counter: version), json: Data())
            return outbox.offer(PushOutbox.Entry(value: value, lastMutationID: nil)).startWriter
        }
        if startWriter {
            running.add(1, ordering: .sequentiallyConsistent)
            Task { await self.write() }
        }
    }

    private func write() async {
        let now = writers.add(1, ordering: .sequentiallyConsistent).newValue
        _ = most.max(now, ordering: .sequentiallyConsistent)
        defer {
            writers.subtract(1, ordering: .sequentiallyConsistent)
            running.subtract(1, ordering: .sequentiallyConsistent)
        }
        while case .write(let entry) = outbox.withLock({ $0.next() }) {
            written.withLock { $0.append(entry.value.version.counter) }
            await Task.yield()
        }
    }

    /// What was written, once every writer has ended (bounded: fails after 30 s times
    /// ``hangGuardScale``).
    func settled() async -> [UInt64] {
        let deadline = ContinuousClock.now + .seconds(30) * hangGuardScale
        while running.load(ordering: .sequentiallyConsistent) > 0 {
            guard ContinuousClock.now < deadline else {
                Issue.record("writers still running after the hang guard's bound")
                break
            }
            await Task.yield()
        }
        return written.withLock { $0 }
    }
}
