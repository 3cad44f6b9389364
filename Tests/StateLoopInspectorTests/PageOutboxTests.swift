import StateLoopInspectorWire
import Synchronization
import TestSupport
import Testing

@testable import StateLoopInspectorServer

/// A page that stops reading costs the inspector a bounded amount of memory, counted in bytes:
/// a page's first copy alone holds up to 32 apps' records, in messages of 2,000 records.
@Suite("Page outbox")
struct PageOutboxTests {
    @Test("a page that stops reading is closed once its waiting messages pass the byte limit; a page that reads stays open")
    func boundedByBytes() async throws {
        let limit = 50_000
        let hub = InspectorHub(capacity: 100_000, pageOutboxBytes: limit)
        let (stalled, reading) = (hub.makePageOutbox(), hub.makePageOutbox())
        _ = hub.pageConnected(outbox: stalled)
        _ = hub.pageConnected(outbox: reading)
        let readingEnded = Mutex(false)
        let reader = Task {
            for await message in reading.messages { reading.written(message) }
            readingEnded.withLock { $0 = true }
        }
        defer { reader.cancel() }
        let (_, appOutbox) = AsyncStream.makeStream(of: String.self)
        let app = hub.appConnected(AppMessage.Hello(session: "s", app: "test", redaction: Redaction(fields: [])), outbox: appOutbox).id

        // 40 batches of about 5 KB: 200 KB in all, four times the limit.
        for batch in 0..<40 {
            let records = (0..<10).map { index in
                var record = InspectorRecord(sequence: UInt64(batch * 10 + index + 1), time: 0, system: "s", kind: .reduced)
                record.event = .string(String(repeating: "e", count: 500))
                return record
            }
            hub.append(records, of: app)
            // The reading page keeps up: nothing of it waits before the next batch.
            #expect(await eventually(within: .seconds(10)) { reading.bytesWaiting == 0 }, "the reading page fell behind")
        }
        // Read off what waited for the stalled page: its stream must have ended (bounded wait).
        let drained = Mutex<(messages: Int, bytes: Int)?>(nil)
        let drainer = Task {
            var (messages, bytes) = (0, 0)
            for await message in stalled.messages {
                messages += 1
                bytes += message.utf8.count
            }
            drained.withLock { $0 = (messages, bytes) }
        }
        let ended = await eventually(within: .seconds(10)) { drained.withLock { $0 } != nil }
        drainer.cancel()
        #expect(ended, "the stalled page was never closed")
        if let (messages, bytes) = drained.withLock({ $0 }) {
            #expect(messages > 0 && bytes <= limit, "\(messages) messages, \(bytes) bytes waited for the stalled page")
        }
        #expect(!readingEnded.withLock { $0 }, "the page that reads was closed too")
    }
}
