extension Feedback {
    /// A UI feedback: `render` shows every state on the main actor.
    ///
    /// When the system itself runs on the main actor, `render` is called synchronously with
    /// every state. Otherwise states are forwarded to the main actor, and a busy main actor skips
    /// to the latest state instead of rendering a backlog.
    public static func bind(_ render: @escaping @MainActor @Sendable (State) -> Void) -> Feedback {
        Feedback(showsState: true) { BindLoop(render: render, events: nil) }
    }

    /// A UI feedback: `render` shows every state on the main actor, and every element of
    /// `events` (button taps, text changes) is sent to the system until it stops.
    public static func bind<Events: AsyncSequence & Sendable>(
        _ render: @escaping @MainActor @Sendable (State) -> Void,
        events: Events
    ) -> Feedback where Events.Element == Event, Events.Failure == Never {
        Feedback(showsState: true) {
            BindLoop(render: render) { send in
                for await event in events {
                    await send(event)
                }
            }
        }
    }
}

/// The running form of ``Feedback/bind(_:)``.
final class BindLoop<State: Sendable, Event: Sendable>: FeedbackLoop {
    private let render: @MainActor @Sendable (State) -> Void
    private let events: (@Sendable (Send<Event>) async -> Void)?
    private var rendersInline = false
    /// Feeds the renderer on the main actor when the system runs elsewhere.
    private var forward: AsyncStream<State>.Continuation?

    init(
        render: @escaping @MainActor @Sendable (State) -> Void,
        events: (@Sendable (Send<Event>) async -> Void)?
    ) {
        self.render = render
        self.events = events
    }

    func start(_ state: State, in host: any EffectHost<Event>) {
        rendersInline = host.isolation === MainActor.shared
        if !rendersInline {
            let (states, continuation) = AsyncStream.makeStream(
                of: State.self,
                bufferingPolicy: .bufferingNewest(1)
            )
            forward = continuation
            let render = render
            host.spawn(endsWhenFinished: false) { _ in
                for await state in states {
                    await render(state)
                }
            }
        }
        if let events {
            host.spawn(endsWhenFinished: false, events)
        }
        update(state, in: host)
    }

    func update(_ state: State, in host: any EffectHost<Event>) {
        if rendersInline {
            let render = render
            MainActor.assumeIsolated { render(state) }
        } else {
            forward?.yield(state)
        }
    }

    func stop() {
        forward?.finish()
        forward = nil
    }
}
