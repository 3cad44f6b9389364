import Foundation
import NightrideHarness
import NightrideServer
import Testing

/// The traffic counters the fault middleware keeps: one per route, whatever arrives.
@Suite("Nightride server: request counters", .timeLimit(.minutes(5)))
struct RequestCountTests {
    @Test("many distinct unknown paths and methods add one counter, not one each; routes count under their pattern")
    func unknownPathsBounded() async throws {
        try await withNightride { harness, client in
            _ = try await client.login("ann")
            let before = harness.stats.requests
            #expect(before["POST /login"] == 1)

            // Long, distinct paths no route answers (the sweep sent 10,000 of 8 KB; fewer and
            // shorter make the same point without a long test), and methods no route knows.
            let padding = String(repeating: "x", count: 2_048)
            let paths = 600
            for index in 0..<paths {
                let (status, _) = try await client.send("GET", "/unknown-\(index)-\(padding)")
                #expect(status == 404)
            }
            // Methods the HTTP parser knows (it refuses others before any route) but no route
            // answers on a path that has routes.
            var answered: [String: Int] = [:]
            for method in ["PROPFIND", "MKCOL", "UNLOCK"] {
                answered[method] = try await client.send(method, "/me/ride").0
            }

            let after = harness.stats.requests
            let added = after.keys.filter { before[$0] == nil }
            #expect(added.count == 1 && added.first == "unmatched", "\(added.count) new counters, as \(added.prefix(3).map { $0.prefix(40) })")
            #expect(after["unmatched"] == paths + 3, "\(answered)")
            // Bounded in size too: no key holds a path that was asked.
            #expect(after.keys.allSatisfy { $0.utf8.count < 100 }, "a counter is keyed by a raw path")
        }
    }
}
