import Benchmark
import StateLoopSync

/// The cost of showing an optimistic value: the confirmed 10,000-item list with the pending
/// mutations replayed on top. It is paid on every change of the queue and on every push, which
/// is the "rebase" of the pending mutations on the server's new value.
func registerOptimisticBenchmarks() {
    for pending in [1, 10, 100, 1_000] {
        Benchmark(
            "Optimistic: visible value, 10,000 items, \(pending) pending",
            configuration: .init(scalingFactor: .one, maxDuration: .seconds(3), maxIterations: 2_000)
        ) { benchmark in
            let confirmed = (0..<10_000).map { "item \($0)" }
            let queue = (0..<pending).map { index in
                PendingMutation(index.isMultiple(of: 2) ? ListChange.append("new \(index)") : ListChange.rename(index, "renamed \(index)"))
            }
            benchmark.startMeasurement()
            for _ in benchmark.scaledIterations {
                blackHole(queue.replayed(on: confirmed))
            }
        }
    }

    // A push of a new confirmed value with 100 mutations pending: the whole rebase as a screen
    // sees it, from the new value to the visible one.
    Benchmark(
        "Optimistic: push rebase, 10,000 items, 100 pending",
        configuration: .init(scalingFactor: .one, maxDuration: .seconds(3), maxIterations: 2_000)
    ) { benchmark in
        var confirmed = (0..<10_000).map { "item \($0)" }
        let queue = (0..<100).map { PendingMutation(ListChange.append("new \($0)")) }
        benchmark.startMeasurement()
        for iteration in benchmark.scaledIterations {
            confirmed[iteration % confirmed.count] = "pushed \(iteration)"
            blackHole(queue.replayed(on: confirmed))
        }
    }
}

/// A change of a list of strings: what an app's mutation usually is.
enum ListChange: Mutation {
    case append(String)
    case rename(Int, String)

    func apply(to list: inout [String]) {
        switch self {
        case .append(let item): list.append(item)
        case .rename(let index, let item): if list.indices.contains(index) { list[index] = item }
        }
    }
}
