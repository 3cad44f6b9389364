import CoreMetrics
import NIOCore
import StateLoopWire
import Synchronization

/// Every open push socket, by the key it follows, and the fan-out of committed changes to
/// their outboxes.
///
/// The store's change feed calls ``publish(_:)`` once per commit, in commit order; the hub
/// keeps, per socket, the reader's `lastMutationID` as of the newest commit it has seen, so a
/// value is pushed with the number that was true when it was committed, never a later one.
final class PushHub: Sendable {
    /// One socket: what it follows and for whom, its writer, and the reader's
    /// `lastMutationID` as of the newest commit published.
    struct Subscriber: Sendable {
        let socket: PushSocket
        let writer: PushSocketWriter
        var lastMutationID: UInt64?

        var key: ResourceKey { socket.key }
        var scope: String { socket.scope }
        var client: ClientID? { socket.client }
    }

    /// Why a socket could not be registered.
    enum Refusal: Error {
        /// The principal already has the most sockets allowed.
        case tooManySockets
        /// The server is shutting down.
        case shuttingDown
    }

    private struct State {
        var subscribers: [ResourceKey: [Int: Subscriber]] = [:]
        var socketsPerScope: [String: Int] = [:]
        /// The sockets of each reading client, whose `lastMutationID` commits move on.
        var socketsPerClient: [ClientProgressKey: [Int: ResourceKey]] = [:]
        var nextID = 0
        var isAccepting = true
        var openSockets = 0
    }

    private let state = Mutex(State())
    private let maximumSocketsPerPrincipal: Int
    /// Whether a value's push is encoded once for its sockets (see `SyncServerConfiguration`).
    private let encodesOnce: Bool
    private let metrics: ServerMetrics
    /// Told what each value's fan-out did, while the server is watched.
    private let activity: ServerActivityObservers

    init(
        maximumSocketsPerPrincipal: Int, encodesOnce: Bool = true, drainsPerTask: Int = 128, metrics: ServerMetrics,
        activity: ServerActivityObservers = ServerActivityObservers()
    ) {
        self.maximumSocketsPerPrincipal = maximumSocketsPerPrincipal
        self.encodesOnce = encodesOnce
        self.drainsPerTask = max(1, drainsPerTask)
        self.metrics = metrics
        self.activity = activity
    }

    /// Registers a socket; returns its id, which ``unregister(_:key:)`` takes.
    func register(_ subscriber: Subscriber) throws(Refusal) -> Int {
        let result: Result<(id: Int, open: Int), Refusal> = state.withLock { state in
            guard state.isAccepting else { return .failure(.shuttingDown) }
            guard state.socketsPerScope[subscriber.scope, default: 0] < maximumSocketsPerPrincipal else {
                return .failure(.tooManySockets)
            }
            state.nextID += 1
            state.subscribers[subscriber.key, default: [:]][state.nextID] = subscriber
            state.socketsPerScope[subscriber.scope, default: 0] += 1
            if let client = subscriber.client {
                state.socketsPerClient[ClientProgressKey(scope: subscriber.scope, client: client), default: [:]][state.nextID] = subscriber.key
            }
            state.openSockets += 1
            return .success((state.nextID, state.openSockets))
        }
        let registered = try result.get()
        metrics.openSockets.record(registered.open)
        return registered.id
    }

    /// Whether `scope` may open another socket now.
    func hasRoom(for scope: String) -> Bool {
        state.withLock { $0.isAccepting && $0.socketsPerScope[scope, default: 0] < maximumSocketsPerPrincipal }
    }

    /// Removes a socket whose connection ended (its handler has already stopped its writer):
    /// nothing more is offered to it.
    func unregister(_ id: Int, key: ResourceKey) {
        let open = state.withLock { state -> Int? in
            guard let subscriber = state.subscribers[key]?.removeValue(forKey: id) else { return nil }
            if state.subscribers[key]?.isEmpty == true { state.subscribers[key] = nil }
            state.socketsPerScope[subscriber.scope, default: 1] -= 1
            if state.socketsPerScope[subscriber.scope] == 0 { state.socketsPerScope[subscriber.scope] = nil }
            if let client = subscriber.client {
                let clientKey = ClientProgressKey(scope: subscriber.scope, client: client)
                state.socketsPerClient[clientKey]?[id] = nil
                if state.socketsPerClient[clientKey]?.isEmpty == true { state.socketsPerClient[clientKey] = nil }
            }
            state.openSockets -= 1
            return state.openSockets
        }
        guard let open else { return }
        // The count as of this change, not as of a later read: gauges must not go back in time.
        metrics.openSockets.record(open)
    }

    /// Raises the `lastMutationID` a socket pushes with to `lastMutationID` (what the socket's
    /// first read found), if it is higher.
    func adopt(lastMutationID: UInt64?, for id: Int, key: ResourceKey) {
        state.withLock { state in
            guard let lastMutationID, var subscriber = state.subscribers[key]?[id] else { return }
            subscriber.lastMutationID = max(subscriber.lastMutationID ?? 0, lastMutationID)
            state.subscribers[key]?[id] = subscriber
        }
    }

    /// Hands one commit's changes to the sockets that follow them. Called in commit order.
    func publish(_ changes: CommittedChanges) {
        var offers: [(id: Int, writer: PushSocketWriter, entry: PushOutbox.Entry)] = []
        state.withLock { state in
            for progress in changes.progress {
                let clientKey = ClientProgressKey(scope: progress.scope, client: progress.client)
                for (id, key) in state.socketsPerClient[clientKey] ?? [:] {
                    guard let known = state.subscribers[key]?[id] else { continue }
                    state.subscribers[key]?[id]?.lastMutationID = max(known.lastMutationID ?? 0, progress.lastMutationID)
                }
            }
            for value in changes.values {
                for (id, subscriber) in state.subscribers[value.key] ?? [:] {
                    offers.append((id, subscriber.writer, PushOutbox.Entry(value: value, lastMutationID: subscriber.lastMutationID)))
                }
            }
        }
        // Outside the hub's lock. Access is checked by each socket's writer, not here: this runs
        // on the store's writer queue, where the app's code would hold up every commit.
        var reports = PushReports(isOn: activity.isWatched)
        if encodesOnce {
            fanOut(offers, reports: &reports)
        } else {
            for (id, writer, entry) in offers {
                let offer = writer.offer(entry)
                record(offer)
                reports.note(offer, socket: id, value: entry.value)
            }
        }
        // One report per commit, whatever its number of values and sockets.
        if reports.isOn {
            let (made, values) = reports.made
            activity.report(.pushes(made, values: values))
        }
    }

    /// Offers each value, encoded once per `lastMutationID` rather than once per socket, and
    /// schedules the drains due in tasks of up to ``drainsPerTask`` writers per event loop
    /// rather than one task per socket: a value 10,000 sockets follow makes a few dozen tasks.
    private func fanOut(_ offers: [(id: Int, writer: PushSocketWriter, entry: PushOutbox.Entry)], reports: inout PushReports) {
        var encoded: [PushKey: EncodedPush] = [:]
        var due: [ObjectIdentifier: (loop: any EventLoop, writers: [PushSocketWriter])] = [:]
        for (id, writer, entry) in offers {
            var entry = entry
            let key = PushKey(key: entry.value.key, version: entry.value.version, lastMutationID: entry.lastMutationID)
            if let known = encoded[key] {
                entry.encoded = known
            } else {
                let made = EncodedPush(entry.value, lastMutationID: entry.lastMutationID)
                encoded[key] = made
                entry.encoded = made
            }
            let (offer, drainDue) = writer.queue(entry)
            record(offer)
            reports.note(offer, socket: id, value: entry.value)
            guard drainDue else { continue }
            let loop = writer.eventLoop
            let id = ObjectIdentifier(loop)
            due[id, default: (loop, [])].writers.append(writer)
            if due[id]?.writers.count == drainsPerTask, let batch = due.removeValue(forKey: id) {
                Self.drain(batch.writers, on: loop)
            }
        }
        for (loop, writers) in due.values { Self.drain(writers, on: loop) }
    }

    /// How many writers one task drains (`SyncServerConfiguration.pushDrainsPerTask`).
    private let drainsPerTask: Int

    private static func drain(_ writers: [PushSocketWriter], on loop: any EventLoop) {
        loop.execute {
            for writer in writers { writer.drain() }
        }
    }

    private func record(_ offer: PushOutbox.Offer) {
        switch offer {
        case .queued: metrics.pushesQueued.increment()
        case .coalesced: metrics.pushesCoalesced.increment()
        case .outdated, .closed: metrics.pushesDropped.increment()
        }
    }

    /// Closes the sockets of the principal `scope` (signed out, say): their clients reconnect
    /// and learn why.
    func close(scope: String) {
        let writers = state.withLock { state in
            state.subscribers.values.flatMap { $0.values.filter { $0.scope == scope }.map(\.writer) }
        }
        for writer in writers { writer.close(.closedByServer, discardingWaiting: true) }
    }

    /// Closes every outbox at once, dropping what waited; sockets are still accepted.
    func closeOpenSockets() {
        let writers = state.withLock { state in
            state.subscribers.values.flatMap { $0.values.map(\.writer) }
        }
        for writer in writers { writer.close(.closedByServer, discardingWaiting: true) }
    }

    /// Stops accepting sockets and closes every outbox: each writer sends what was waiting,
    /// then closes its socket. Returns the writers it closed.
    @discardableResult
    func closeAll() -> [PushSocketWriter] {
        let writers = state.withLock { state in
            state.isAccepting = false
            return state.subscribers.values.flatMap { $0.values.map(\.writer) }
        }
        for writer in writers { writer.close(.serverStopping) }
        return writers
    }

    /// Accepts sockets again after ``closeAll()``: the server starts again in the same process.
    func resumeAccepting() {
        state.withLock { $0.isAccepting = true }
    }

    /// Whether sockets are accepted: false once the server is shutting down.
    var isAccepting: Bool {
        state.withLock { $0.isAccepting }
    }

    var openSockets: Int {
        state.withLock { $0.openSockets }
    }

    /// The writers of the sockets that follow `key`: tests look at what their channels hold.
    func writers(following key: ResourceKey) -> [PushSocketWriter] {
        state.withLock { $0.subscribers[key]?.values.map(\.writer) ?? [] }
    }
}

/// A reading client under its principal.
struct ClientProgressKey: Hashable, Sendable {
    var scope: String
    var client: ClientID
}

/// What one commit's fan-out did with each socket, gathered per value while the server is
/// watched, and not at all otherwise. The offers come value by value (``PushHub/publish(_:)``
/// builds them so), so a value's report is the last one: nothing is hashed. The first
/// ``ServerActivity/PushReport/listedValues`` values are reported, each naming its first
/// ``ServerActivity/PushReport/namedSockets`` sockets per outcome; the rest are counted, so that
/// watching a fan-out of thousands of values costs the commit a few hundred appends.
private struct PushReports {
    let isOn: Bool
    private var reports: [ServerActivity.PushReport] = []
    /// Values past the listed ones.
    private var unlisted = 0
    private var lastKey: ResourceKey?

    init(isOn: Bool) {
        self.isOn = isOn
    }

    mutating func note(_ offer: PushOutbox.Offer, socket: Int, value: StoredValue) {
        guard isOn else { return }
        if lastKey != value.key {
            lastKey = value.key
            if reports.count < ServerActivity.PushReport.listedValues {
                reports.append(ServerActivity.PushReport(key: value.key, version: value.version))
            } else {
                unlisted += 1
            }
        }
        guard unlisted == 0 else { return }
        reports[reports.count - 1].note(offer, socket: socket)
    }

    /// The reports, in the order of the commit's values, and how many values there were.
    var made: (reports: [ServerActivity.PushReport], values: Int) {
        (reports, reports.count + unlisted)
    }
}

/// What makes two pushes the same text.
private struct PushKey: Hashable {
    let key: ResourceKey
    let version: Version
    let lastMutationID: UInt64?
}
