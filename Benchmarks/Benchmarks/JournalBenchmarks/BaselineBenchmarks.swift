import Benchmark
import Foundation

/// What the journal does per event besides SQLite, measured alone: `JSONEncoder` encodes every
/// recorded event (`Journal.record`) and `JSONDecoder` decodes every replayed one
/// (`Journal.init`), one coder for all events as the journal does. An iteration codes
/// 1,000,000 events.
func registerCodingBaselines() {
    Benchmark(
        "Journal baseline: JSONEncoder, 1 event",
        configuration: .init(scalingFactor: .mega, maxDuration: .seconds(20))
    ) { benchmark in
        let encoder = JSONEncoder()
        for index in benchmark.scaledIterations {
            blackHole(try encoder.encode(TallyEvent.numbered(index)))
        }
    }

    let payloads = (0..<1_000).map { try! JSONEncoder().encode(TallyEvent.numbered($0)) }
    Benchmark(
        "Journal baseline: JSONDecoder, 1 event",
        configuration: .init(scalingFactor: .mega, maxDuration: .seconds(20))
    ) { benchmark in
        let decoder = JSONDecoder()
        for index in benchmark.scaledIterations {
            blackHole(try decoder.decode(TallyEvent.self, from: payloads[index % payloads.count]))
        }
    }

    // The coders the journal could store with, on a row of 512 events as the journal codes
    // them: JSON (what it uses) and Foundation's binary property list (the only other
    // self-describing `Codable` coder among the packages this project may use). An iteration
    // codes 1,000 rows, 512,000 events.
    let row = (0..<512).map(TallyEvent.numbered)
    Benchmark(
        "Journal coder: JSONEncoder, a row of 512 events",
        configuration: .init(scalingFactor: .kilo, maxDuration: .seconds(10))
    ) { benchmark in
        let encoder = JSONEncoder()
        for _ in benchmark.scaledIterations {
            blackHole(try encoder.encode(row))
        }
    }
    Benchmark(
        "Journal coder: PropertyListEncoder (binary), a row of 512 events",
        configuration: .init(scalingFactor: .kilo, maxDuration: .seconds(10))
    ) { benchmark in
        let encoder = PropertyListEncoder()
        encoder.outputFormat = .binary
        for _ in benchmark.scaledIterations {
            blackHole(try encoder.encode(row))
        }
    }
    let jsonRow = try! JSONEncoder().encode(row)
    let plistRow: Data = {
        let encoder = PropertyListEncoder()
        encoder.outputFormat = .binary
        return try! encoder.encode(row)
    }()
    Benchmark(
        "Journal coder: JSONDecoder, a row of 512 events",
        configuration: .init(scalingFactor: .kilo, maxDuration: .seconds(10))
    ) { benchmark in
        let decoder = JSONDecoder()
        for _ in benchmark.scaledIterations {
            blackHole(try decoder.decode([TallyEvent].self, from: jsonRow))
        }
    }
    Benchmark(
        "Journal coder: PropertyListDecoder (binary), a row of 512 events",
        configuration: .init(scalingFactor: .kilo, maxDuration: .seconds(10))
    ) { benchmark in
        let decoder = PropertyListDecoder()
        for _ in benchmark.scaledIterations {
            blackHole(try decoder.decode([TallyEvent].self, from: plistRow))
        }
    }
}
