/// The reducers one action produces. Each reducer changes the state; the view model publishes
/// the state after each one.
public struct Reducers<State: Sendable>: Sendable {
    /// One change of the state.
    public typealias Reducer = @Sendable (inout State) -> Void

    enum Kind: Sendable {
        case immediate([Reducer])
        case run(@Sendable (State, Emit<State>) async throws -> Void)
    }

    let kind: Kind

    /// No change: the action completes at once.
    public static var none: Reducers {
        Reducers(kind: .immediate([]))
    }

    /// One change, applied at once.
    public static func reduce(_ reducer: @escaping Reducer) -> Reducers {
        Reducers(kind: .immediate([reducer]))
    }

    /// Several changes, applied at once, in order, each published.
    public static func reduce(_ reducers: [Reducer]) -> Reducers {
        Reducers(kind: .immediate(reducers))
    }

    /// Work that runs in a task with the state as it was when the action was sent, emits any
    /// number of reducers and may throw. A thrown error is reported on the view model's error
    /// outputs; the view model goes on taking actions.
    public static func run(_ work: @escaping @Sendable (State, Emit<State>) async throws -> Void) -> Reducers {
        Reducers(kind: .run(work))
    }

    /// A sequence of reducers, applied as they arrive; a failure of the sequence is reported on
    /// the view model's error outputs.
    public static func sequence<Sequence: AsyncSequence & Sendable>(_ sequence: Sequence) -> Reducers
    where Sequence.Element == Reducer {
        .run { _, emit in
            for try await reducer in sequence {
                await emit(reducer)
            }
        }
    }
}

/// Emits reducers from the work of a ``Reducers/run(_:)`` action. Each call returns once the
/// reducer is applied, so the work sees its changes in order.
public struct Emit<State: Sendable>: Sendable {
    let apply: @Sendable (@escaping Reducers<State>.Reducer) async -> Void

    /// Applies `reducer` to the view model's state, unless the action was cancelled.
    public func callAsFunction(_ reducer: @escaping Reducers<State>.Reducer) async {
        await apply(reducer)
    }
}
