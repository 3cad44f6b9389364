import StateLoopCollections
import Synchronization
import TasksClient
import TasksModel

/// The board's core run against a ``TasksClient``: the events of the keys and of the client's
/// live queries go through ``BoardCore/reduce(_:_:)`` one at a time, in order, and the effects
/// it asks for are done with the client.
///
/// No terminal here: the host feeds keys with ``send(_:)`` and draws what ``run(show:)``
/// hands it; a test does the same with a scripted list of keys.
///
/// What it watches: the user's projects (`TasksClient.projects()`), the board's query
/// (`TasksClient.board(_:status:assignee:)`, made again whenever the core asks), the server's
/// refusals (`tasks.refusals()`), and, every `statusInterval`, the subscriptions' status and
/// the pending changes, which nothing announces.
public final class BoardSession: Sendable {
    /// The client driven.
    public let client: TasksClient
    private let events: AsyncStream<BoardEvent>
    private let input: AsyncStream<BoardEvent>.Continuation
    private let latest: Mutex<BoardState>
    private let statusInterval: Duration
    private let clock: any Clock<Duration>

    /// A session of `client`, reading its sync status every `statusInterval` of `clock`.
    public init(client: TasksClient, statusInterval: Duration = .milliseconds(500), clock: any Clock<Duration> = ContinuousClock()) {
        self.client = client
        self.statusInterval = statusInterval
        self.clock = clock
        // Unbounded: a key must never be dropped, however fast it is typed or pasted.
        (events, input) = AsyncStream.makeStream(of: BoardEvent.self)
        latest = Mutex(BoardState(user: client.user))
    }

    /// Queues `event` (a key, a stop); safe from any thread.
    public func send(_ event: BoardEvent) {
        input.yield(event)
    }

    /// The state as of the last event handled.
    public var state: BoardState {
        latest.withLock { $0 }
    }

    /// Handles events until the user quits or ``BoardEvent/stop`` comes, calling `show` with
    /// the first state and every state that differs from the one before; the last state.
    /// On the way out the live queries stop and the client's feeds end; closing the client is
    /// its owner's.
    @discardableResult
    public func run(show: (BoardState) -> Void) async -> BoardState {
        var state = latest.withLock { $0 }
        var board: Watch?
        let projects = client.projects()
        let feeds = [
            forward(projects.updates()) { rows in .projects(rows.map(Project.init)) },
            Task { [client, input] in
                for await refusal in client.tasks.refusals() {
                    input.yield(
                        .refused(
                            refusal.mutation.map { "the server refused \($0.summary): \(refusal.message)" }
                                ?? "a change was dropped: \(refusal.message)"))
                }
            },
            Task { [client, input, clock, statusInterval] in
                while !Task.isCancelled {
                    input.yield(.sync(Self.syncInfo(of: client)))
                    do { try await clock.sleep(for: statusInterval) } catch { return }
                }
            },
        ]
        show(state)
        for await event in events {
            let (next, effects) = BoardCore.reduce(state, event)
            for effect in effects { perform(effect, board: &board) }
            if next != state {
                state = next
                latest.withLock { $0 = next }
                show(next)
            }
            if state.quitting { break }
        }
        board?.stop()
        projects.stop()
        for feed in feeds { feed.cancel() }
        input.finish()
        return state
    }

    /// The board's live query and the task forwarding its rows.
    private struct Watch {
        let query: LiveQuery<TaskItem>
        let feed: Task<Void, Never>

        func stop() {
            // Stopping the query ends its updates, and so the feed; cancelling is for good measure.
            query.stop()
            feed.cancel()
        }
    }

    private func perform(_ effect: BoardEffect, board: inout Watch?) {
        switch effect {
        case .watch(let query, let generation):
            board?.stop()
            board = query.map { query in
                let live = client.board(query.projectID, status: query.status, assignee: query.assignee)
                return Watch(query: live, feed: forward(live.updates()) { rows in .tasks(Array(rows), generation: generation) })
            }
        case .mutate(let mutation):
            do {
                try client.mutate(mutation)
            } catch {
                send(.failed("could not save \(mutation.summary): \(error)"))
            }
            send(.sync(Self.syncInfo(of: client)))
        case .add(let title, let projectID, let status):
            do {
                send(.added(try client.add(title, to: projectID, status: status)))
            } catch {
                send(.failed("could not add “\(TerminalText.sanitized(title))”: \(error)"))
            }
            send(.sync(Self.syncInfo(of: client)))
        case .fetch(let id):
            do {
                send(.fetched(id: id, try client.tasks.row(id)))
            } catch {
                send(.failed("could not read the task: \(error)"))
            }
        case .quit:
            break
        }
    }

    /// A task that hands every delivery of `stream` to the core as `event` of it.
    private func forward<Value: Sendable>(
        _ stream: AsyncStream<Value>, as event: @escaping @Sendable (Value) -> BoardEvent
    ) -> Task<Void, Never> {
        Task { [input] in
            for await value in stream { input.yield(event(value)) }
        }
    }

    private static func syncInfo(of client: TasksClient) -> SyncInfo {
        let connections = client.subscriptionStatuses.map { status -> SyncInfo.Connection in
            switch status {
            case .connecting: .connecting
            case .live: .live
            case .refused: .refused
            }
        }
        return SyncInfo(connections: connections, pending: client.tasks.pendingCount)
    }
}
