import Benchmark
import StateLoopViewModel

/// Actions through a view model whose reducer is synchronous: each action is two events of the
/// underlying system (apply, complete) plus the bookkeeping of the outputs, with no subscriber.
func registerViewModelBenchmarks() {
    Benchmark(
        "ViewModel: synchronous actions",
        closure: { benchmark, fixture in
            await fixture.execute(actions: benchmark.scaledIterations.count)
        },
        setup: { await ViewModelFixture() }
    )
}

/// A counter screen: one action, one immediate reducer.
struct CounterScreen: ViewModelDefinition {
    var initialState: Counter { Counter() }

    func reducers(for action: CounterEvent) -> Reducers<Counter> {
        .reduce { Counter.reduce(&$0, action) }
    }
}

@BenchActor
final class ViewModelFixture {
    private let viewModel: ViewModel<CounterScreen>

    init() {
        // Built in the initializer, which runs on BenchActor: a property initializer has no
        // isolation to give the view model.
        viewModel = ViewModel(CounterScreen())
    }

    func execute(actions: Int) {
        let before = viewModel.state.count
        for _ in 0..<actions {
            viewModel.execute(.increment)
        }
        precondition(viewModel.state.count == before &+ actions, "an action was lost")
    }
}
