extension Feedback {
    /// Embeds a child feature's feedbacks in a parent system.
    ///
    /// The child's loops run while `state` finds the child's part of the parent state, see that
    /// part change, and have every effect cancelled when it goes away (`nil`). The child's events
    /// reach the parent's reducer through `event`. The child knows nothing of its parent: the
    /// same feedbacks drive it on its own or embedded.
    public static func scope<ChildState: Sendable, ChildEvent: Sendable>(
        state toChild: @escaping @Sendable (State) -> ChildState?,
        event toParent: @escaping @Sendable (ChildEvent) -> Event,
        feedbacks: [Feedback<ChildState, ChildEvent>]
    ) -> Feedback {
        Feedback {
            ScopeLoop(toChild: toChild, toParent: toParent, feedbacks: feedbacks)
        }
    }

    /// Embeds one child per element of a collection in a parent system: a list of rows, each
    /// with its own effects.
    ///
    /// A row's loops start when its identifier appears in `rows`, see every new value of that
    /// row, and have every effect cancelled when the identifier disappears. A row's events reach
    /// the parent's reducer through `event`, with the row's identifier.
    public static func forEach<Row: Identifiable & Sendable, RowEvent: Sendable>(
        _ rows: @escaping @Sendable (State) -> [Row],
        event toParent: @escaping @Sendable (Row.ID, RowEvent) -> Event,
        feedbacks: [Feedback<Row, RowEvent>]
    ) -> Feedback where Row.ID: Sendable {
        Feedback {
            ForEachLoop(rows: rows, toParent: toParent, feedbacks: feedbacks)
        }
    }
}

/// The loops of one embedded child, and the host that runs their effects.
final class ChildLoops<ChildState: Sendable, ChildEvent: Sendable, ParentEvent: Sendable> {
    private let loops: [RunningLoop<ChildState>]
    private let host: ScopedEffectHost<ChildEvent, ParentEvent>

    init(
        state: ChildState,
        feedbacks: [Feedback<ChildState, ChildEvent>],
        host: ScopedEffectHost<ChildEvent, ParentEvent>
    ) {
        self.loops = feedbacks.map { $0.start(state, host) }
        self.host = host
    }

    func update(_ state: ChildState) {
        for loop in loops {
            loop.update(state)
        }
    }

    /// Stops every loop and cancels every effect the child started.
    func end() {
        for loop in loops {
            loop.stop()
        }
        host.cancelAll()
    }
}

/// The running form of ``Feedback/scope(state:event:feedbacks:)``.
final class ScopeLoop<State: Sendable, Event: Sendable, ChildState: Sendable, ChildEvent: Sendable>: FeedbackLoop {
    private let toChild: @Sendable (State) -> ChildState?
    private let toParent: @Sendable (ChildEvent) -> Event
    private let feedbacks: [Feedback<ChildState, ChildEvent>]
    private var child: ChildLoops<ChildState, ChildEvent, Event>?

    init(
        toChild: @escaping @Sendable (State) -> ChildState?,
        toParent: @escaping @Sendable (ChildEvent) -> Event,
        feedbacks: [Feedback<ChildState, ChildEvent>]
    ) {
        self.toChild = toChild
        self.toParent = toParent
        self.feedbacks = feedbacks
    }

    func start(_ state: State, in host: any EffectHost<Event>) {
        update(state, in: host)
    }

    func update(_ state: State, in host: any EffectHost<Event>) {
        switch (toChild(state), child) {
        case (nil, nil):
            return
        case (let childState?, let running?):
            running.update(childState)
        case (let childState?, nil):
            child = ChildLoops(
                state: childState,
                feedbacks: feedbacks,
                host: ScopedEffectHost(parent: host, toParent: toParent)
            )
        case (nil, let running?):
            running.end()
            child = nil
        }
    }

    func stop() {
        child?.end()
        child = nil
    }
}

/// The running form of ``Feedback/forEach(_:event:feedbacks:)``.
final class ForEachLoop<State: Sendable, Event: Sendable, Row: Identifiable & Sendable, RowEvent: Sendable>: FeedbackLoop
where Row.ID: Sendable {
    private let rows: @Sendable (State) -> [Row]
    private let toParent: @Sendable (Row.ID, RowEvent) -> Event
    private let feedbacks: [Feedback<Row, RowEvent>]
    private var children: [Row.ID: ChildLoops<Row, RowEvent, Event>] = [:]

    init(
        rows: @escaping @Sendable (State) -> [Row],
        toParent: @escaping @Sendable (Row.ID, RowEvent) -> Event,
        feedbacks: [Feedback<Row, RowEvent>]
    ) {
        self.rows = rows
        self.toParent = toParent
        self.feedbacks = feedbacks
    }

    func start(_ state: State, in host: any EffectHost<Event>) {
        update(state, in: host)
    }

    func update(_ state: State, in host: any EffectHost<Event>) {
        let current = rows(state)
        if current.isEmpty && children.isEmpty {
            return
        }
        var seen = Set<Row.ID>(minimumCapacity: current.count)
        for row in current {
            seen.insert(row.id)
            if let child = children[row.id] {
                child.update(row)
            } else {
                let id = row.id
                let toParent = toParent
                children[id] = ChildLoops(
                    state: row,
                    feedbacks: feedbacks,
                    host: ScopedEffectHost(parent: host) { toParent(id, $0) }
                )
            }
        }
        for (id, child) in children where !seen.contains(id) {
            child.end()
            children[id] = nil
        }
    }

    func stop() {
        for child in children.values {
            child.end()
        }
        children = [:]
    }
}
