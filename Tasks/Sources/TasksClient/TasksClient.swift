import Foundation
import Logging
import StateLoopCollections
import StateLoopSync
import StateLoopSyncTransports
import Synchronization
import TasksModel

/// One user's device: its local store (on disk, or in memory), the tasks and memberships
/// collections synced from the server, and the user's changes.
///
/// ```swift
/// let session = try await TasksClient.signIn(server: url, name: "ann")
/// let client = try TasksClient(server: url, session: session, storePath: folder + "/ann.sqlite")
/// client.start()
/// for await tasks in client.board("p1").updates() { show(tasks) }
/// try client.mutate(.move(id: task.id, to: .done, position: task.position))
/// ```
public final class TasksClient: Sendable {
    /// The signed-in user.
    public let user: String
    /// The device's store.
    public let store: LocalStore
    /// The tasks of every project the user belongs to.
    public let tasks: LocalCollection<TaskItem, TaskMutation>
    /// The user's memberships.
    public let memberships: LocalCollection<Membership, NoRowMutation<Membership>>
    /// The server, as this session.
    public let endpoint: SyncEndpoint
    private let subscriptions = Mutex<[RowSubscription]>([])

    /// Signs in as `name` (the demo server's sign-in: a name alone), over `transport` (`nil`:
    /// the network).
    public static func signIn(server: URL, name: String, transport: (any SyncTransport)? = nil) async throws -> TasksSessionAnswer {
        try await SyncEndpoint(server: server, transport: transport).post(TasksCollections.Path.login, ["name": name], as: TasksSessionAnswer.self)
    }

    /// The device of `session` on `server`, its store in the file `storePath` (in memory when
    /// `nil`), opened with `policy`.
    public convenience init(
        server: URL, session: TasksSessionAnswer, storePath: String?, policy: ResourcePolicy = ResourcePolicy(),
        reconnectBackoff: Duration = .milliseconds(250), logger: Logger = Logger(label: "tasks.client")
    ) throws {
        let store = try storePath.map { try LocalStore(path: $0, policy: policy) } ?? LocalStore.inMemory(policy: policy)
        self.init(server: server, session: session, store: store, policy: policy, reconnectBackoff: reconnectBackoff, logger: logger)
    }

    /// The device of `session` on `server` with the store `store` (made with the same `policy`
    /// and `clock`), its timers on `clock`, reaching the server over `transport` (`nil`: the
    /// network): a simulation's device, say, on a store in memory and a server in process.
    public init(
        server: URL, session: TasksSessionAnswer, store: LocalStore, policy: ResourcePolicy = ResourcePolicy(),
        reconnectBackoff: Duration = .milliseconds(250), clock: any Clock<Duration> = ContinuousClock(), transport: (any SyncTransport)? = nil,
        logger: Logger = Logger(label: "tasks.client")
    ) {
        user = session.user
        endpoint = SyncEndpoint(
            server: server, bearerToken: session.token, policy: policy, reconnectBackoff: reconnectBackoff, clock: clock, logger: logger,
            transport: transport)
        self.store = store
        tasks = store.collection(TasksCollections.tasks, mutations: TaskMutation.self, send: endpoint.rowMutations(at: TasksCollections.Path.tasks))
        memberships = store.collection(TasksCollections.memberships)
    }

    /// Starts syncing: the user's memberships and the tasks of their projects.
    public func start() {
        let started = [
            memberships.subscribe(
                endpoint.rows(at: TasksCollections.Path.memberships, query: TasksCollections.Query.myMemberships, as: Membership.self)),
            tasks.subscribe(endpoint.rows(at: TasksCollections.Path.tasks, query: TasksCollections.Query.myTasks, as: TaskItem.self)),
        ]
        subscriptions.withLock { $0 += started }
    }

    /// Where each of the subscriptions `start()` made stands (memberships, then tasks): empty
    /// while stopped. A screen polls it, as subscriptions tell no one when it changes.
    public var subscriptionStatuses: [RowSubscription.Status] {
        subscriptions.withLock { $0 }.map(\.status)
    }

    /// Stops syncing; the rows stay on the device.
    public func stop() {
        let stopped = subscriptions.withLock { subscriptions in
            defer { subscriptions = [] }
            return subscriptions
        }
        for subscription in stopped { subscription.stop() }
    }

    /// Stops syncing and closes the store: what the app does as it quits.
    public func close() throws {
        stop()
        try store.close()
    }

    /// The user's projects, as a live query.
    public func projects() -> LiveQuery<Membership> {
        memberships.live(RowQuery(where: [RowCondition("user", equals: .text(user))], orderedBy: [RowOrder("projectID")]))
    }

    /// A project's board (one status, one assignee, if given), as a live query.
    public func board(_ projectID: String, status: TaskItem.Status? = nil, assignee: String? = nil) -> LiveQuery<TaskItem> {
        tasks.live(TasksCollections.board(projectID, status: status, assignee: assignee))
    }

    /// Makes `mutation`: on the board at once, sent in order, once.
    public func mutate(_ mutation: TaskMutation) throws {
        try tasks.mutate(mutation)
    }

    /// Adds a task titled `title` at the end of `projectID`'s board, under `id` (a new random one
    /// when `nil`).
    @discardableResult
    public func add(_ title: String, to projectID: String, status: TaskItem.Status = .todo, id: String? = nil) throws -> TaskItem {
        // The board's last task alone, not the board.
        let last = tasks.live(
            RowQuery(where: [RowCondition("projectID", equals: .text(projectID))], orderedBy: [RowOrder("position", descending: true)], limit: 1))
        defer { last.stop() }
        let task = TaskItem(
            id: id ?? UUID().uuidString.lowercased(), projectID: projectID, title: title, status: status,
            position: (last.rows.first?.position ?? 0) + 1)
        try tasks.mutate(.add(task))
        return task
    }
}

/// What the sign-in answers: the session's token and the user.
public struct TasksSessionAnswer: Codable, Sendable, Hashable {
    public var token: String
    public var user: String

    public init(token: String, user: String) {
        self.token = token
        self.user = user
    }
}
