import StateLoop

/// What a ``ViewModel`` renders: the screen's state, and whether a spinner action is running.
public struct ViewModelState<Action: Sendable, State: Sendable>: Sendable {
    /// The screen's state.
    public internal(set) var state: State
    /// The actions whose work is running, by run number.
    var running: [UInt64: ActionRun<Action, State>] = [:]

    /// Whether at least one action that shows a spinner is running. Two overlapping spinner
    /// actions keep it `true` from the first start to the last end, with no gap.
    public var isLoading: Bool {
        running.values.contains { $0.showsSpinner }
    }

    init(state: State) {
        self.state = state
    }
}

/// One sending of an action: identified by its run number, so that sending the same action
/// twice makes two runs.
struct ActionRun<Action: Sendable, State: Sendable>: Hashable, Sendable {
    let id: UInt64
    let action: Action
    let showsSpinner: Bool
    let policy: ActionPolicy
    /// The state when the action was sent, handed to its work.
    let stateWhenSent: State
    let work: (@Sendable (State, Emit<State>) async throws -> Void)?

    static func == (lhs: ActionRun, rhs: ActionRun) -> Bool {
        lhs.id == rhs.id
    }

    func hash(into hasher: inout Hasher) {
        hasher.combine(id)
    }
}

/// The events of a view model's system.
enum ViewModelEvent<Action: Sendable, State: Sendable>: Sendable {
    /// A reducer of `run` to apply.
    case apply(ActionRun<Action, State>, Reducers<State>.Reducer)
    /// The work of `run` starts.
    case start(ActionRun<Action, State>)
    /// `run` has applied all of its reducers.
    case complete(ActionRun<Action, State>)
    /// The work of `run` threw.
    case fail(ActionRun<Action, State>, any Error)

    static func reduce(_ model: inout ViewModelState<Action, State>, _ event: Self) {
        switch event {
        case .apply(_, let reducer):
            reducer(&model.state)
        case .start(let run):
            if case .switchToLatest(let key) = run.policy {
                model.running = model.running.filter { $0.value.policy != .switchToLatest(key: key) }
            }
            model.running[run.id] = run
        case .complete(let run), .fail(let run, _):
            model.running[run.id] = nil
        }
    }

    /// Runs the work of every running action; an action that leaves `running` (replaced by a
    /// newer one) has its work cancelled, and nothing it emits afterwards is applied.
    static var work: Feedback<ViewModelState<Action, State>, Self> {
        .react(queries: { Set($0.running.values) }) { run, send in
            guard let work = run.work else { return }
            do {
                try await work(run.stateWhenSent, Emit { reducer in await send(.apply(run, reducer)) })
                await send(.complete(run))
            } catch {
                await send(.fail(run, error))
            }
        }
    }
}
