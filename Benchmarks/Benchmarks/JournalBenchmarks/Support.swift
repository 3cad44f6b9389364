import Foundation

/// The actor every journaled system under test belongs to. A `System` must be created on an
/// actor; a dedicated global actor keeps the benchmarks independent of the harness's thread.
@globalActor
actor JournalActor {
    static let shared = JournalActor()
}

/// A small state whose fold shows every event applied once, in order (as the journal tests'
/// `Tally`): the count, the sum and an order-sensitive checksum of the values added.
struct Tally: Codable, Equatable, Sendable {
    var count = 0
    var sum = 0
    var checksum: UInt64 = 14_695_981_039_346_656_037

    static func reduce(_ state: inout Tally, _ event: TallyEvent) {
        switch event {
        case .add(let value):
            state.count += 1
            state.sum += value
            state.checksum =
                (state.checksum ^ UInt64(truncatingIfNeeded: value)) &* 1_099_511_628_211
        case .reset:
            state = Tally()
        }
    }
}

/// A small event: an enum with an Int payload. Encoded by the journal as
/// `{"add":{"_0":517}}`, 18 bytes for a three-digit value.
enum TallyEvent: Codable, Equatable, Sendable {
    case add(Int)
    case reset
}

extension TallyEvent {
    /// The `index`th event a benchmark sends: values 0 to 999, so most payloads have 3 digits.
    static func numbered(_ index: Int) -> TallyEvent {
        .add(index % 1_000)
    }
}

/// A new folder for one benchmark's journal files, under the system's temporary folder.
struct TemporaryFolder: Sendable {
    let path: String

    init() throws {
        path =
            FileManager.default.temporaryDirectory
            .appendingPathComponent("stateloop-journal-bench-\(UUID().uuidString)").path
        try FileManager.default.createDirectory(atPath: path, withIntermediateDirectories: true)
    }

    var journal: String { path + "/bench.journal" }

    func remove() {
        try? FileManager.default.removeItem(atPath: path)
    }
}
