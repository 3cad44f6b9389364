import StateLoop
import StateLoopWire

/// The actor a resource's system lives on: `RemoteResource` and `OptimisticResource` each run
/// their machine on one, fed by an ordered stream of commands.
///
/// Threading: the system is created, driven and stopped inside ``run``, so it is bound to this
/// actor for its whole life; `publish` is called on it after every state, and the event it
/// returns, if any, is sent back at once (queued behind the notification, as any send is).
actor SystemHost {
    func run<State: Sendable, Event: Sendable>(
        initialState: State,
        reduce: @escaping @Sendable (inout State, Event) -> Void,
        feedbacks: [Feedback<State, Event>],
        commands: AsyncStream<Event>,
        publish: @escaping @Sendable (State) -> Event?
    ) async {
        let system = System(initialState: initialState, reduce: reduce, feedbacks: feedbacks)
        let subscription = system.observe { state in
            if let reply = publish(state) { system.send(reply) }
        }
        for await command in commands {
            system.send(command)
        }
        subscription.cancel()
        system.stop()
    }
}
