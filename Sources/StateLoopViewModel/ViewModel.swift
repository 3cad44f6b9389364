import StateLoop

/// A screen's view model: actions in, state out, built on a `System`.
///
/// ```swift
/// let viewModel = ViewModel(Login(service: service))
/// viewModel.execute(.setUsername("admin"))
/// viewModel.execute(.login)
/// for await loading in viewModel.loading { spinner.isHidden = !loading }
/// ```
///
/// Every action produces ``Reducers``; each reducer applied publishes the new state. The six
/// outputs are asynchronous sequences that end when the consuming task is cancelled or the view
/// model is released:
///
/// | output | emits |
/// |---|---|
/// | ``states`` | the state, now and after every reducer |
/// | ``actionUpdates`` | the action and the state after each of its reducers |
/// | ``actionCompletions`` | the action and the state once all of its reducers are applied |
/// | ``actionFailures`` | the action and the error when its work throws |
/// | ``errors`` | every error any action's work throws |
/// | ``loading`` | whether a spinner action runs, now and on every change |
///
/// Errors never end the view model: a failed action is reported and the next action runs as
/// usual. Releasing the view model cancels every running action.
///
/// Isolation: like `System`, a view model belongs to the actor it is created on (usually the
/// main actor), where ``execute(_:)`` and ``state`` are synchronous.
public final class ViewModel<Definition: ViewModelDefinition> {
    public typealias Action = Definition.Action
    public typealias State = Definition.State

    private let definition: Definition
    private let outputs: Outputs
    private let system: System<ViewModelState<Action, State>, ViewModelEvent<Action, State>>
    private var lastRun: UInt64 = 0

    /// Creates the view model with `definition`'s initial state.
    public init(_ definition: Definition, isolation: isolated (any Actor)? = #isolation) {
        guard let actor = isolation else {
            preconditionFailure(
                "A ViewModel must be created on an actor, usually from a @MainActor context."
            )
        }
        let initial = ViewModelState<Action, State>(state: definition.initialState)
        let outputs = Outputs(isolation: actor, initial: initial)
        self.definition = definition
        self.outputs = outputs
        self.system = System(
            initialState: initial,
            reduce: ViewModelEvent.reduce,
            feedbacks: [ViewModelEvent.work],
            monitor: outputs,
            isolation: isolation
        )
    }

    deinit {
        system.stop()
        outputs.finish()
    }

    /// The current state.
    public var state: State {
        system.state.state
    }

    /// Whether an action that shows a spinner is running.
    public var isLoading: Bool {
        system.state.isLoading
    }

    /// Runs `action`: its immediate reducers are applied before this returns; its work, if any,
    /// starts in a task.
    public func execute(_ action: Action) {
        lastRun += 1
        let reducers = definition.reducers(for: action)
        switch reducers.kind {
        case .immediate(let list):
            let run = ActionRun(
                id: lastRun, action: action, showsSpinner: false,
                policy: .concurrent, stateWhenSent: system.state.state, work: nil
            )
            for reducer in list {
                system.send(.apply(run, reducer))
            }
            system.send(.complete(run))
        case .run(let work):
            let run = ActionRun(
                id: lastRun, action: action, showsSpinner: definition.showSpinner(action),
                policy: definition.policy(for: action), stateWhenSent: system.state.state, work: work
            )
            system.send(.start(run))
        }
    }

    /// The state now, then after every reducer. A slow consumer skips to the latest state.
    public var states: AsyncStream<State> {
        outputs.states.subscribe(startingWith: state, bufferingPolicy: .bufferingNewest(1))
    }

    /// Each action with the state after each of its reducers.
    public var actionUpdates: AsyncStream<ActionUpdate<Action, State>> {
        outputs.actionUpdates.subscribe(bufferingPolicy: .unbounded)
    }

    /// Each action with the state once all of its reducers are applied. A failed or cancelled
    /// action does not complete.
    public var actionCompletions: AsyncStream<ActionUpdate<Action, State>> {
        outputs.actionCompletions.subscribe(bufferingPolicy: .unbounded)
    }

    /// Each action whose work threw, with the error.
    public var actionFailures: AsyncStream<ActionFailure<Action>> {
        outputs.actionFailures.subscribe(bufferingPolicy: .unbounded)
    }

    /// Every error thrown by an action's work.
    public var errors: AsyncStream<any Error> {
        outputs.errors.subscribe(bufferingPolicy: .unbounded)
    }

    /// Whether a spinner action runs: the current value, then every change.
    public var loading: AsyncStream<Bool> {
        outputs.loading.subscribe(startingWith: isLoading, bufferingPolicy: .bufferingNewest(1))
    }

    /// An `Observable` view of ``ViewModelState`` (`state` and `isLoading`) for SwiftUI.
    public func observedState() -> ObservedState<ViewModelState<Action, State>> {
        system.observedState()
    }

    /// How many subscribers each output has; for tests of subscription lifetimes.
    package var subscriberCount: Int {
        outputs.subscriberCount
    }
}

extension ViewModel {
    /// Turns what the system reduces into the six outputs. Called on the view model's actor.
    final class Outputs: SystemMonitor {
        let states: Broadcast<State>
        let actionUpdates: Broadcast<ActionUpdate<Action, State>>
        let actionCompletions: Broadcast<ActionUpdate<Action, State>>
        let actionFailures: Broadcast<ActionFailure<Action>>
        let errors: Broadcast<any Error>
        let loading: Broadcast<Bool>
        private var wasLoading: Bool

        init(isolation: any Actor, initial: ViewModelState<Action, State>) {
            states = Broadcast(isolation: isolation)
            actionUpdates = Broadcast(isolation: isolation)
            actionCompletions = Broadcast(isolation: isolation)
            actionFailures = Broadcast(isolation: isolation)
            errors = Broadcast(isolation: isolation)
            loading = Broadcast(isolation: isolation)
            wasLoading = initial.isLoading
        }

        func system(
            didReduce event: ViewModelEvent<Action, State>,
            source: EventSource,
            into model: ViewModelState<Action, State>
        ) {
            switch event {
            case .apply(let run, _):
                states.yield(model.state)
                actionUpdates.yield(ActionUpdate(action: run.action, state: model.state))
            case .complete(let run):
                actionCompletions.yield(ActionUpdate(action: run.action, state: model.state))
            case .fail(let run, let error):
                actionFailures.yield(ActionFailure(action: run.action, error: error))
                errors.yield(error)
            case .start:
                break
            }
            let isLoading = model.isLoading
            if isLoading != wasLoading {
                wasLoading = isLoading
                loading.yield(isLoading)
            }
        }

        var subscriberCount: Int {
            states.subscriberCount + actionUpdates.subscriberCount + actionCompletions.subscriberCount
                + actionFailures.subscriberCount + errors.subscriberCount + loading.subscriberCount
        }

        func finish() {
            states.finish()
            actionUpdates.finish()
            actionCompletions.finish()
            actionFailures.finish()
            errors.finish()
            loading.finish()
        }
    }
}
