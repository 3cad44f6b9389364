extension Feedback {
    /// Runs one effect per request in the set that `query` finds in the state.
    ///
    /// `query` is evaluated against every state. Requests that appear start an effect, requests
    /// that stay keep theirs running untouched, and requests that disappear have their effect
    /// cancelled; events from a cancelled effect are never reduced. Requests are told apart by
    /// `Hashable` identity, so a request that should restart when its content changes must
    /// include that content in its hash.
    ///
    /// The effect gets a ``Send`` and may send any number of events; errors it throws are turned
    /// into an event by `catch`.
    public static func react<Request: Hashable & Sendable>(
        queries: @escaping @Sendable (State) -> Set<Request>,
        effects: @escaping @Sendable (Request, Send<Event>) async throws -> Void,
        catch mapError: @escaping @Sendable (any Error) -> Event
    ) -> Feedback {
        Feedback {
            ReactSetLoop(query: queries) { request, send in
                do {
                    try await effects(request, send)
                } catch {
                    await send(mapError(error))
                }
            }
        }
    }

    /// Runs one effect per request in the set that `query` finds in the state; each effect sends
    /// any number of events and cannot fail.
    public static func react<Request: Hashable & Sendable>(
        queries: @escaping @Sendable (State) -> Set<Request>,
        effects: @escaping @Sendable (Request, Send<Event>) async -> Void
    ) -> Feedback {
        Feedback { ReactSetLoop(query: queries, effect: effects) }
    }

    /// Runs one effect per request in the set that `query` finds in the state; each effect
    /// returns the one event to send.
    public static func react<Request: Hashable & Sendable>(
        queries: @escaping @Sendable (State) -> Set<Request>,
        effects: @escaping @Sendable (Request) async -> Event
    ) -> Feedback {
        react(queries: queries) { request, send in await send(effects(request)) }
    }

    /// Runs one effect per request in the set that `query` finds in the state; each effect
    /// returns the one event to send, or throws an error that `catch` turns into the event.
    public static func react<Request: Hashable & Sendable>(
        queries: @escaping @Sendable (State) -> Set<Request>,
        effects: @escaping @Sendable (Request) async throws -> Event,
        catch mapError: @escaping @Sendable (any Error) -> Event
    ) -> Feedback {
        react(queries: queries, effects: { request, send in await send(try await effects(request)) }, catch: mapError)
    }
}

/// The running form of ``Feedback/react(queries:effects:)-(_,(Request,Send<Event>)->Void)``.
final class ReactSetLoop<State: Sendable, Event: Sendable, Request: Hashable & Sendable>: FeedbackLoop {
    private let query: @Sendable (State) -> Set<Request>
    private let effect: @Sendable (Request, Send<Event>) async -> Void
    private var running: [Request: OriginID] = [:]

    init(
        query: @escaping @Sendable (State) -> Set<Request>,
        effect: @escaping @Sendable (Request, Send<Event>) async -> Void
    ) {
        self.query = query
        self.effect = effect
    }

    func start(_ state: State, in host: any EffectHost<Event>) {
        update(state, in: host)
    }

    func update(_ state: State, in host: any EffectHost<Event>) {
        let requests = query(state)
        if requests.isEmpty && running.isEmpty {
            return
        }
        if requests.count == running.count && requests.allSatisfy({ running[$0] != nil }) {
            return
        }
        for (request, origin) in running where !requests.contains(request) {
            host.cancel(origin)
            running[request] = nil
        }
        let effect = effect
        for request in requests where running[request] == nil {
            running[request] = host.spawn(endsWhenFinished: false, request: request) { send in await effect(request, send) }
        }
    }

    func stop() {
        running = [:]
    }
}
