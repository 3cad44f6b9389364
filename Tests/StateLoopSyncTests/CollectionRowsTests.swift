import StateLoopSync
import TestSupport
import Testing

/// `CollectionRows`: answers applied under the protocol's rules, whatever order they arrive in.
@Suite("Collections: rows held by a client")
struct CollectionRowsTests {
    typealias Rows = [String: VersionedRow<String>]

    /// The server's history: its states, the first empty, each at the cookie of its position.
    struct History {
        var states: [Rows] = [[:]]

        init(length: Int, using random: inout SplitMix64) {
            for position in 1..<length {
                var next = states.last!
                for _ in 0..<Int.random(in: 1...3, using: &random) {
                    let id = "r\(Int.random(in: 0..<6, using: &random))"
                    if Bool.random(using: &random) {
                        next[id] = nil
                    } else {
                        next[id] = VersionedRow(id: id, version: Version(epoch: 1, counter: UInt64(position)), value: "\(position)")
                    }
                }
                states.append(next)
            }
        }

        static func cookie(_ position: Int) -> String {
            "1.\(position).0123456789abcdef"
        }

        func whole(_ position: Int) -> RowsDifference<String> {
            RowsDifference(cookie: Self.cookie(position), replace: true, rows: Array(states[position].values), removed: [])
        }

        /// The difference from `from` to `to`, as a server answers it.
        func difference(from: Int, to: Int) -> RowsDifference<String> {
            let (old, new) = (states[from], states[to])
            return RowsDifference(
                cookie: Self.cookie(to), replace: false, rows: new.values.filter { old[$0.id] != $0 },
                removed: old.keys.filter { new[$0] == nil })
        }
    }

    @Test(
        "answers in any order, repeated or stale, leave the rows at one of the server's states, never an earlier one than before", arguments: 0..<30)
    func neverOlder(seed: UInt64) {
        var random = SplitMix64(seed: seed)
        let history = History(length: 10, using: &random)
        var held = CollectionRows<String>()
        var reached = -1
        for _ in 0..<60 {
            let outcome: CollectionRows<String>.Outcome
            if Int.random(in: 0..<3, using: &random) == 0 {
                outcome = held.apply(history.whole(Int.random(in: 0..<10, using: &random)), requestedWith: nil)
            } else {
                let from = Int.random(in: 0..<9, using: &random)
                let to = Int.random(in: from...9, using: &random)
                outcome = held.apply(history.difference(from: from, to: to), requestedWith: History.cookie(from))
            }
            guard let cookie = held.cookie else {
                #expect(outcome != .applied)
                continue
            }
            let position = Int(cookie.split(separator: ".")[1])!
            #expect(held.rows == history.states[position], "the rows are not the server's state at their cookie (seed \(seed))")
            #expect(position >= reached, "the rows went back from \(reached) to \(position) (seed \(seed))")
            reached = position
        }
    }

    @Test("a difference relative to another cookie is refused and asks for a catch-up; an older whole result is dropped; a newer epoch's applies")
    func rules() {
        var held = CollectionRows<String>()
        let row = VersionedRow(id: "a", version: Version(epoch: 1, counter: 1), value: "a")
        #expect(held.apply(RowsDifference(cookie: "1.5.q", replace: false, rows: [row], removed: []), requestedWith: nil) == .needsCatchUp)
        #expect(held.apply(RowsDifference(cookie: "1.5.q", replace: true, rows: [row], removed: []), requestedWith: nil) == .applied)
        #expect(held.apply(RowsDifference(cookie: "1.9.q", replace: false, rows: [], removed: ["a"]), requestedWith: "1.4.q") == .needsCatchUp)
        #expect(held.rows.keys.sorted() == ["a"])
        #expect(held.apply(RowsDifference(cookie: "1.3.q", replace: true, rows: [], removed: []), requestedWith: nil) == .outdated)
        #expect(held.apply(RowsDifference(cookie: "1.9.q", replace: false, rows: [], removed: ["a"]), requestedWith: "1.5.q") == .applied)
        #expect(held.rows.isEmpty && held.cookie == "1.9.q")
        // A restored server's new epoch: its whole result applies, whatever its position.
        #expect(held.apply(RowsDifference(cookie: "2.1.q", replace: true, rows: [row], removed: []), requestedWith: nil) == .applied)
        #expect(held.apply(RowsDifference(cookie: "1.99.q", replace: true, rows: [], removed: []), requestedWith: nil) == .outdated)
        held.clear()
        #expect(held.rows.isEmpty && held.cookie == nil)
    }
}
