extension Feedback {
    /// A feedback built by hand: `loop` gets the stream of every state (the current one first)
    /// and returns the events to send. The stream finishes when the system stops.
    ///
    /// Prefer ``react(query:effects:)-(_,(Request)->Event)``: it handles cancellation for you.
    /// A custom loop is for what it cannot express, such as an operator over the whole history
    /// of states.
    public static func custom<Events: AsyncSequence & Sendable>(
        _ loop: @escaping @Sendable (AsyncStream<State>) -> Events
    ) -> Feedback where Events.Element == Event, Events.Failure == Never {
        Feedback {
            CustomLoop { states, send in
                for await event in loop(states) {
                    await send(event)
                }
            }
        }
    }

    /// A feedback built by hand whose events may fail; `catch` turns the error into the last
    /// event of the loop.
    public static func custom<Events: AsyncSequence & Sendable>(
        _ loop: @escaping @Sendable (AsyncStream<State>) -> Events,
        catch mapError: @escaping @Sendable (any Error) -> Event
    ) -> Feedback where Events.Element == Event {
        Feedback {
            CustomLoop { states, send in
                do {
                    for try await event in loop(states) {
                        await send(event)
                    }
                } catch {
                    await send(mapError(error))
                }
            }
        }
    }
}

/// The running form of ``Feedback/custom(_:)``.
final class CustomLoop<State: Sendable, Event: Sendable>: FeedbackLoop {
    private let run: @Sendable (AsyncStream<State>, Send<Event>) async -> Void
    private var states: AsyncStream<State>.Continuation?

    init(run: @escaping @Sendable (AsyncStream<State>, Send<Event>) async -> Void) {
        self.run = run
    }

    func start(_ state: State, in host: any EffectHost<Event>) {
        // Unbounded: a custom loop is promised every state, not just the latest.
        let (stream, continuation) = AsyncStream.makeStream(of: State.self)
        states = continuation
        continuation.yield(state)
        let run = run
        host.spawn(endsWhenFinished: false) { send in await run(stream, send) }
    }

    func update(_ state: State, in host: any EffectHost<Event>) {
        states?.yield(state)
    }

    func stop() {
        states?.finish()
        states = nil
    }
}
