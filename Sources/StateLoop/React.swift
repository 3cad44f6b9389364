extension Feedback {
    /// Runs one effect for the request that `query` finds in the state.
    ///
    /// `query` is evaluated against every state. When it returns a request, an effect starts for
    /// it; when it returns `nil`, nothing runs. When the request changes, the running effect is
    /// cancelled and one starts for the new request; when it stays equal, the running effect is
    /// left alone. Events from a cancelled effect are never reduced.
    ///
    /// This is the general form: the effect gets a ``Send`` and may send any number of events.
    /// Errors it throws are turned into an event by `catch`, never dropped.
    @inlinable
    public static func react<Request: Equatable & Sendable>(
        query: @escaping @Sendable (State) -> Request?,
        effects: @escaping @Sendable (Request, Send<Event>) async throws -> Void,
        catch mapError: @escaping @Sendable (any Error) -> Event
    ) -> Feedback {
        Feedback {
            ReactLoop(query: query) { request, send in
                do {
                    try await effects(request, send)
                } catch {
                    await send(mapError(error))
                }
            }
        }
    }

    /// Runs one effect for the request that `query` finds in the state; the effect sends any
    /// number of events and cannot fail. See ``react(query:effects:catch:)-(_,(Request,Send<Event>)->Void,_)``.
    @inlinable
    public static func react<Request: Equatable & Sendable>(
        query: @escaping @Sendable (State) -> Request?,
        effects: @escaping @Sendable (Request, Send<Event>) async -> Void
    ) -> Feedback {
        Feedback { ReactLoop(query: query, effect: effects) }
    }

    /// Runs one effect for the request that `query` finds in the state; the effect returns the
    /// one event to send.
    @inlinable
    public static func react<Request: Equatable & Sendable>(
        query: @escaping @Sendable (State) -> Request?,
        effects: @escaping @Sendable (Request) async -> Event
    ) -> Feedback {
        react(query: query) { request, send in await send(effects(request)) }
    }

    /// Runs one effect for the request that `query` finds in the state; the effect returns the
    /// one event to send, or throws an error that `catch` turns into the event.
    @inlinable
    public static func react<Request: Equatable & Sendable>(
        query: @escaping @Sendable (State) -> Request?,
        effects: @escaping @Sendable (Request) async throws -> Event,
        catch mapError: @escaping @Sendable (any Error) -> Event
    ) -> Feedback {
        react(query: query, effects: { request, send in await send(try await effects(request)) }, catch: mapError)
    }

    /// Runs one effect for the request that `query` finds in the state; the effect is a sequence
    /// of events, consumed until it ends or the request changes.
    @inlinable
    public static func react<Request: Equatable & Sendable, Events: AsyncSequence & Sendable>(
        query: @escaping @Sendable (State) -> Request?,
        effects: @escaping @Sendable (Request) -> Events,
        catch mapError: @escaping @Sendable (any Error) -> Event
    ) -> Feedback where Events.Element == Event {
        react(
            query: query,
            effects: { request, send in
                for try await event in effects(request) {
                    await send(event)
                }
            }, catch: mapError)
    }
}

/// The running form of ``Feedback/react(query:effects:)-(_,(Request,Send<Event>)->Void)``.
@usableFromInline
final class ReactLoop<State: Sendable, Event: Sendable, Request: Equatable & Sendable>: FeedbackLoop {
    @usableFromInline let query: @Sendable (State) -> Request?
    @usableFromInline let effect: @Sendable (Request, Send<Event>) async -> Void
    @usableFromInline @exclusivity(unchecked) var current: (request: Request, origin: OriginID)?

    @inlinable
    init(
        query: @escaping @Sendable (State) -> Request?,
        effect: @escaping @Sendable (Request, Send<Event>) async -> Void
    ) {
        self.query = query
        self.effect = effect
    }

    @inlinable
    func start(_ state: State, in host: any EffectHost<Event>) {
        update(state, in: host)
    }

    @inlinable
    func update(_ state: State, in host: any EffectHost<Event>) {
        let request = query(state)
        switch (current, request) {
        case (nil, nil):
            return
        case (let running?, let request?) where running.request == request:
            return
        default:
            if let running = current {
                host.cancel(running.origin)
            }
            current = request.map { request in
                let effect = effect
                let origin = host.spawn(endsWhenFinished: false, request: request) { send in await effect(request, send) }
                return (request, origin)
            }
        }
    }

    @inlinable
    func stop() {
        current = nil
    }
}
