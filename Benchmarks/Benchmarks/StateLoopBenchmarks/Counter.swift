import Benchmark

/// The actor every system under test belongs to. A `System` captures the isolation it is created
/// on; a dedicated global actor (rather than `MainActor`) keeps the benchmarks independent of
/// which thread the harness happens to run on, and lets effect tasks hop back while a benchmark
/// awaits.
@globalActor
actor BenchActor {
    static let shared = BenchActor()
}

/// The smallest state that still does work per event, so that the benchmarks measure the
/// system's overhead rather than the reducer.
struct Counter: Sendable, Equatable, Codable {
    var count = 0

    static func reduce(_ state: inout Counter, _ event: CounterEvent) {
        switch event {
        case .increment:
            state.count &+= 1
        case .noop:
            break
        }
    }
}

enum CounterEvent: Sendable, Equatable, Codable {
    case increment
    /// Sent back by effects; reducing it changes nothing, so it never restarts an effect.
    case noop
}

/// What an observer writes to. A class so that the observer closure has a side effect the
/// optimizer must keep, and so that the benchmark can check the observer saw the last state.
final class ObservedCount {
    var last = -1
}
