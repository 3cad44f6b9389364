import Foundation
import StateLoopWire
import TestSupport
import Testing

@_spi(Benchmarks) @testable import StateLoopCollections

/// The live result moved row by row is the result read whole, after any sequence of changes.
@Suite struct LiveResultTests {
    /// Random rows changed, moved in and out, deleted, with and without a limit: after every
    /// change, the result updated incrementally (read again when it says so) equals the rows
    /// sorted and cut from scratch. The window of 400 spans two chunks. It yields now and then:
    /// a test that computes for seconds without a suspension holds one of the few threads
    /// Swift concurrency has (as many as cores), and the suite's other tests starved beside it
    /// on a busy machine (its window of 1,000 among 3,000 rows took 39 s, and tests waiting on a
    /// socket gave up).
    @Test(arguments: [(nil, 40), (1, 40), (5, 40), (20, 40), (nil, 3_000), (400, 1_000)])
    func incrementalEqualsWhole(limit: Int?, ids: Int) async {
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
            if step % 16 == 0 { await Task.yield() }
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
            #expect(result.held.map(\.id) == whole(), "step \(step)")
            #expect(Array(result.rows) == whole(), "step \(step): the rows handed out")
            if result.held.map(\.id) != whole() { return }
        }
    }

    /// Rows merged into a held result in batches (a first sync's pages, ties on the ordered
    /// field broken by id) hold what sorting them all at once holds, with and without a limit.
    @Test(arguments: [nil, 7, 700])
    func mergedBatchesEqualOneSort(limit: Int?) {
        var random = SplitMix64(seed: UInt64(limit ?? 1))
        let query = RowQuery(orderedBy: [.init("rank")], limit: limit)
        var result = LiveResult<String>(query: query, matching: [])
        var all: [LiveResult<String>.Entry] = []
        for batch in 0..<6 {
            let added = (0..<(batch * 150)).map { index in
                LiveResult<String>.Entry(
                    id: "r\(UInt64.random(in: 0..<100_000, using: &random))-\(batch)-\(index)",
                    fields: ["rank": .integer(Int64.random(in: 0..<20, using: &random))], row: "")
            }
            all += added
            #expect(result.update(Dictionary(uniqueKeysWithValues: added.map { ($0.id, Optional($0)) })) != .reread)
            var sorted = LiveResult<String>(query: query, matching: [])
            sorted.reset(all)
            #expect(result.held.map(\.id) == sorted.held.map(\.id), "batch \(batch)")
            #expect(Array(result.rows.indices.map(result.rows.id(at:))) == sorted.held.map(\.id), "batch \(batch): the rows handed out")
        }
    }

    /// Rows changed many at once (taken out, moved, hidden, added: a page, or a large
    /// difference) leave the result equal to the rows sorted and cut from scratch, with and
    /// without a limit, whether the batch lands in one chunk, in many, or past the last.
    @Test(arguments: [nil, 10, 300])
    func batchesEqualWhole(limit: Int?) async {
        var random = SplitMix64(seed: 77 + UInt64(limit ?? 0))
        let query = RowQuery(where: [.init("done", equals: .bool(false))], orderedBy: [.init("rank")], limit: limit)
        var all: [String: [String: FieldValue]] = [:]
        var result = LiveResult<String>(query: query, matching: [])
        for batch in 0..<24 {
            if batch % 8 == 0 { await Task.yield() }
            var changes: [String: LiveResult<String>.Entry?] = [:]
            // Some batches add at the end (a first sync's pages in the order of the ranks).
            let appending = batch % 3 == 0
            for index in 0..<Int.random(in: 65..<400, using: &random) {
                let id = appending ? "a\(batch)-\(index)" : "r\(Int.random(in: 0..<1_500, using: &random))"
                if !appending, Int.random(in: 0..<4, using: &random) == 0 {
                    all[id] = nil
                } else {
                    let rank = appending ? 1_000 + batch * 1_000 + index : Int.random(in: 0..<2_000, using: &random)
                    all[id] = ["done": .bool(Int.random(in: 0..<6, using: &random) == 0), "rank": .integer(Int64(rank))]
                }
                changes[id] = .some(all[id].map { .init(id: id, fields: $0, row: id) })
            }
            if result.update(changes) == .reread {
                result.reset(all.map { .init(id: $0.key, fields: $0.value, row: $0.key) }.filter { query.matches($0.fields) })
            }
            let whole = Array(
                all.filter { query.matches($0.value) }.map { ($0.key, $0.value) }
                    .sorted { query.precedes(($0.0, $0.1), ($1.0, $1.1)) }.map(\.0).prefix(limit ?? .max))
            #expect(result.held.map(\.id) == whole, "batch \(batch)")
            #expect(Array(result.rows.indices.map(result.rows.id(at:))) == whole, "batch \(batch): the rows handed out")
            #expect(result.chunks.allSatisfy { !$0.isEmpty && $0.count <= LiveResult<String>.chunkCapacity }, "batch \(batch): the chunks")
            if result.held.map(\.id) != whole { return }
        }
    }

    /// A field that is a real but not a number (NaN) or infinite sorts as `null`, where NaN,
    /// neither before nor after any value, made the binary search that places a changed row
    /// put it anywhere and lose the order of the rows after it.
    @Test func nonFiniteRealsSortAsNull() {
        let query = RowQuery(orderedBy: [.init("rank")])
        let ranks: [FieldValue] = [.real(.nan), .integer(3), .real(.infinity), .real(1.5), .null, .real(-.infinity), .text("a"), .integer(-2)]
        var all: [String: [String: FieldValue]] = [:]
        var result = LiveResult<String>(query: query, matching: [])
        var random = SplitMix64(seed: 11)
        for step in 0..<600 {
            let id = "r\(Int.random(in: 0..<60, using: &random))"
            all[id] = ["rank": ranks.randomElement(using: &random)!]
            if result.update(id, to: .init(id: id, fields: all[id]!, row: id)) == .reread {
                result.reset(all.map { .init(id: $0.key, fields: $0.value, row: $0.key) })
            }
            let whole = all.map { ($0.key, $0.value) }.sorted { query.precedes(($0.0, $0.1), ($1.0, $1.1)) }.map(\.0)
            #expect(result.held.map(\.id) == whole, "step \(step)")
            if result.held.map(\.id) != whole { return }
        }
        #expect(FieldValue.real(.nan) == .null && FieldValue.real(-.infinity) == .real(.nan))
        #expect(Set<FieldValue>([.null, .real(.nan), .real(.infinity)]).count == 1)
        #expect(FieldValue.real(.infinity) < .integer(Int64.min) && !(FieldValue.real(.nan) < .null))
    }
}
