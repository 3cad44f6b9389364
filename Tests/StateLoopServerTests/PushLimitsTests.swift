import Foundation
import NIOCore
import ServerTestApp
@testable import StateLoopServer
import StateLoopWire
import TestSupport
import Testing

/// What a push socket's client can make the server hold: bytes it does not read. Every wait is
/// bounded; time bounds are hang guards, generous enough for a machine shared with other builds.
@Suite("Sync server: what a push socket's client may cost", .timeLimit(.minutes(2)))
struct PushLimitsTests {
    @Test("a socket that never reads holds no more than the bytes in flight: its pushes coalesce and it is cut after the slow-reader timeout, while a reader beside it gets every newest value")
    func silentSocketCutWithinTimeout() async throws {
        let configuration = SyncServerConfiguration(slowReaderTimeout: .milliseconds(500))
        try await withNotesServer(configuration: configuration) { server, client in
            _ = try await server.update { try $0.write("", to: Notes.pages, "main") }
            let silent = try SilentSocket(port: client.port, path: "pages/push", token: "t-ann")
            defer { silent.close() }
            #expect(await eventually(within: .seconds(10)) { server.openSockets == 1 }, "the silent socket did not open")
            let reader = PushReader(port: client.port, path: "pages/push", as: "bob")
            defer { reader.cancel() }
            #expect(await eventually(within: .seconds(10)) { reader.values(String.self).count == 1 }, "the reader got no first value")
            // Up to 48 pages of 8 KB: 384 KB, six times the bytes in flight allowed, and well
            // under what Linux's send buffer takes on loopback when it sizes itself (over a
            // megabyte): without the bound they all sit in the kernel, the channel never stops
            // being writable, and the socket waits for the dead-peer timeout (a minute). Each
            // page waits for the reader to get it, so that a busy event loop does not coalesce
            // pages before they reach the silent socket (then too few bytes would be sent).
            let pages = (1...48).map { "\($0):" + String(repeating: "\($0 % 10)", count: 8_000) }
            var sent = 0
            for page in pages where server.openSockets == 2 {
                _ = try await server.update { try $0.write(page, to: Notes.pages, "main") }
                sent += 1
                let reached = await eventually(within: .seconds(10)) { reader.values(String.self).last?.value == page }
                #expect(reached, "the reader did not get page \(sent)")
            }
            let cut = await eventually(within: .seconds(10)) { server.openSockets == 1 }
            #expect(cut, "the silent socket was still open 10 s after \(sent) pages (slow-reader timeout 500 ms)")
            #expect(await silent.waitForEnd(within: .seconds(10)), "the silent socket's connection stayed open")
            let metrics = server.renderedMetrics
            #expect(metrics.contains("stateloop_slow_readers_closed_total 1"), "\(metrics)")
            #expect(!metrics.contains("stateloop_pushes_coalesced_total 0"), "the silent socket's pushes never coalesced: \(metrics)")
            // The reader beside it got the newest page, its versions in order.
            #expect(await eventually(within: .seconds(10)) { reader.values(String.self).last?.value == pages[sent - 1] }, "the reader missed the last page")
            let counters = reader.values(String.self).map(\.version.counter)
            #expect(counters == counters.sorted() && Set(counters).count == counters.count, "\(counters)")
            _ = try await server.update { try $0.write("after", to: Notes.pages, "main") }
            #expect(await eventually(within: .seconds(10)) { reader.values(String.self).last?.value == "after" }, "the reader is no longer served")
        }
    }
}
