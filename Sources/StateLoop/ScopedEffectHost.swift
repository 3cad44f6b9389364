/// Runs a child's effects inside a parent system: the child's events are turned into parent
/// events on their way back, and every effect the child started can be cancelled at once when
/// the child's part of the state goes away.
///
/// Threading: like the loops it serves, used only on the parent system's actor.
final class ScopedEffectHost<ChildEvent: Sendable, ParentEvent: Sendable>: EffectHost {
    private let parent: any EffectHost<ParentEvent>
    private let toParent: @Sendable (ChildEvent) -> ParentEvent
    private var origins: Set<OriginID> = []

    init(parent: any EffectHost<ParentEvent>, toParent: @escaping @Sendable (ChildEvent) -> ParentEvent) {
        self.parent = parent
        self.toParent = toParent
    }

    var isolation: any Actor {
        parent.isolation
    }

    @discardableResult
    func spawn<Request: Sendable>(
        endsWhenFinished: Bool,
        request: Request?,
        _ operation: @escaping @Sendable (Send<ChildEvent>) async -> Void
    ) -> OriginID {
        let toParent = toParent
        let origin = parent.spawn(endsWhenFinished: endsWhenFinished, request: request) { send in
            let receiver = MappedReceiver(parent: send.receiver, transform: toParent)
            await operation(Send(receiver: receiver, origin: send.origin))
        }
        origins.insert(origin)
        return origin
    }

    func cancel(_ origin: OriginID) {
        origins.remove(origin)
        parent.cancel(origin)
    }

    /// Cancels every effect the child started.
    func cancelAll() {
        for origin in origins {
            parent.cancel(origin)
        }
        origins = []
    }
}

/// Turns a child's events into its parent's on their way to the parent's core.
struct MappedReceiver<Event: Sendable, ParentEvent: Sendable>: EventReceiver {
    let parent: any EventReceiver<ParentEvent>
    let transform: @Sendable (Event) -> ParentEvent

    func receive(_ event: Event, from origin: OriginID, senderCancelled: Bool) async {
        await parent.receive(transform(event), from: origin, senderCancelled: senderCancelled)
    }
}
