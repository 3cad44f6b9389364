import StateLoop
import StateLoopWire

extension Feedback {
    /// A live query driven by the state: while `query` gives a query (the screen's filter, say),
    /// the rows of `collection` it selects are sent as `event`, now and at every change; when
    /// the state's query changes, the old live query stops and the new one starts; `nil` runs
    /// none.
    ///
    /// ```swift
    /// .rows(of: tasks, query: { state in Board.open(in: state.projectID) }, event: Event.tasksChanged)
    /// ```
    public static func rows<Row, M>(
        of collection: LocalCollection<Row, M>, query: @escaping @Sendable (State) -> RowQuery?,
        event: @escaping @Sendable (LiveRows<Row>) -> Event
    ) -> Feedback {
        .react(query: query) { (query: RowQuery, send: Send<Event>) in
            let live = collection.live(query)
            defer { live.stop() }
            for await rows in live.updates() {
                await send(event(rows))
            }
        }
    }

    /// Sends `event` for each change to `collection`'s rows that the server refuses, once,
    /// while the system runs: the place for "could not save" messages.
    public static func refusals<Row, M>(
        of collection: LocalCollection<Row, M>, event: @escaping @Sendable (RefusedRowMutation<M>) -> Event
    ) -> Feedback {
        .react(query: { _ in true }) { _, send in
            for await refusal in collection.refusals() {
                await send(event(refusal))
            }
        }
    }
}
