import Foundation
import StateLoopWire
import TestSupport
import Testing

@_spi(Benchmarks) @testable import StateLoopCollections

/// The live result moved row by row is the result read whole, after any sequence of changes.
@Suite struct LiveResultTests {
    /// Random rows changed, moved in and out, deleted, with and without a limit: after every
    /// change, the result updated incrementally (read again when it says so) equals the rows
    /// sorted and cut from scratch.
    @Test(arguments: [(nil, 40), (1, 40), (5, 40), (20, 40), (nil, 3_000), (1_000, 3_000)])
    func incrementalEqualsWhole(limit: Int?, ids: Int) {
        var random = SplitMix64(seed: UInt64(limit ?? 0) + UInt64(ids))
        let query = RowQuery(where: [.init("done", equals: .bool(false))], orderedBy: [.init("rank", descending: true)], limit: limit)
        var all: [String: [String: FieldValue]] = [:]
        func entry(_ id: String) -> LiveResult<String>.Entry? {
            all[id].map { .init(id: id, fields: $0, row: id) }
        }
        func whole() -> [String] {
            let matching = all.filter { query.matches($0.value) }.map { ($0.key, $0.value) }
                .sorted { query.precedes(($0.0, $0.1), ($1.0, $1.1)) }.map(\.0)
            return Array(matching.prefix(limit ?? .max))
        }
        // Many rows: filled first, so that chunks split and empty as rows move.
        for index in 0..<(ids > 100 ? ids : 0) {
            all["r\(index)"] = ["done": .bool(false), "rank": .integer(Int64.random(in: 0..<10, using: &random))]
        }
        var result = LiveResult<String>(query: query, matching: all.keys.compactMap(entry))
        for step in 0..<2_000 {
            let id = "r\(Int.random(in: 0..<ids, using: &random))"
            if Int.random(in: 0..<(ids > 100 ? 2 : 5), using: &random) == 0 {
                all[id] = nil
            } else {
                all[id] = ["done": .bool(Bool.random(using: &random)), "rank": .integer(Int64.random(in: 0..<10, using: &random))]
            }
            if result.update(id, to: entry(id)) == .reread {
                result.reset(all.keys.compactMap(entry).filter { query.matches($0.fields) })
            }
            guard ids < 100 || step % 500 == 0 else { continue }
            #expect(result.entries.map(\.id) == whole(), "step \(step)")
            #expect(Array(result.rows) == whole(), "step \(step): the rows handed out")
            if result.entries.map(\.id) != whole() { return }
        }
    }
}
