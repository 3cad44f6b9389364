import Foundation
@testable import StateLoopServer
import StateLoopWire
import Testing

@Suite("Push outbox")
struct PushOutboxTests {
    let key = ResourceKey(resource: "notes", id: "ann")
    let other = ResourceKey(resource: "notes", id: "bob")

    func entry(_ key: ResourceKey, _ counter: UInt64, _ lastMutationID: UInt64? = nil) -> PushOutbox.Entry {
        PushOutbox.Entry(value: StoredValue(key: key, version: Version(epoch: 1, counter: counter), json: Data("\(counter)".utf8)), lastMutationID: lastMutationID)
    }

    @Test("a reader that does not take keeps one value per key, the newest, in first-offered order")
    func coalesces() async {
        let outbox = PushOutbox()
        #expect(outbox.offer(entry(key, 1)) == .queued)
        #expect(outbox.offer(entry(other, 1)) == .queued)
        for counter in UInt64(2)...1_000 {
            #expect(outbox.offer(entry(key, counter)) == .coalesced)
        }
        #expect(outbox.waitingCount == 2)
        #expect(await outbox.next() == entry(key, 1_000))
        #expect(await outbox.next() == entry(other, 1))
    }

    @Test("an offer older than what was queued or sent is dropped; the same version with a newer lastMutationID is not")
    func versionsOnlyForward() async {
        let outbox = PushOutbox()
        #expect(outbox.offer(entry(key, 5, 2)) == .queued)
        #expect(await outbox.next() == entry(key, 5, 2))
        #expect(outbox.offer(entry(key, 4, 9)) == .outdated)
        #expect(outbox.offer(entry(key, 5, 2)) == .outdated)
        #expect(outbox.offer(entry(key, 5, 1)) == .outdated)
        #expect(outbox.offer(entry(key, 5, 3)) == .queued)
        #expect(await outbox.next() == entry(key, 5, 3))
        // A later epoch is newer whatever its counter.
        let restored = PushOutbox.Entry(value: StoredValue(key: key, version: Version(epoch: 2, counter: 1), json: Data()), lastMutationID: nil)
        #expect(outbox.offer(restored) == .queued)
    }

    @Test("a waiting reader is handed the next offer at once")
    func waitingReader() async {
        let outbox = PushOutbox()
        async let taken = outbox.next()
        // Offers until one reaches the waiting reader (before it waits, offers queue instead).
        #expect(outbox.offer(entry(key, 1)) != .closed)
        #expect(await taken == entry(key, 1))
    }

    @Test("close hands over what waits, then ends; a cancelled reader ends at once")
    func closeAndCancel() async {
        let outbox = PushOutbox()
        _ = outbox.offer(entry(key, 1))
        outbox.close()
        #expect(outbox.offer(entry(key, 2)) == .closed)
        #expect(await outbox.next() == entry(key, 1))
        #expect(await outbox.next() == nil)

        let idle = PushOutbox()
        let reader = Task { await idle.next() }
        reader.cancel()
        #expect(await reader.value == nil)
        #expect(idle.offer(entry(key, 1)) == .closed)
    }
}
