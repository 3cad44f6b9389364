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
}
