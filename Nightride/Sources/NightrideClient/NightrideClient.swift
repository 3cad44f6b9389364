import Foundation
import Logging
import NightrideModel
import StateLoop
import StateLoopInspector
import StateLoopJournal
import StateLoopSync
import StateLoopSyncTransports

/// A stateless Nightride client: the screen comes from the user's driver mode and ride status,
/// each a remote resource (pull over HTTP, push over WebSocket, versioned), changed through
/// optimistic mutations; its own state (search box, history) lives in a journaled system.
///
/// ```swift
/// let api = try await NightrideAPI.login(server: url, name: "ann")
/// let client = try NightrideClient(api: api, options: ClientOptions(journalPath: "ann.journal"))
/// let shown = client.system.observe { state in render(state.screen) }
/// client.perform(.requestRide(to: gareDuNord))
/// ```
///
/// Threading: the client and its system belong to the actor they are created on (the main
/// actor for a screen; any actor in a simulation, whose main actor does not run), and the
/// compiler keeps them there.
public final class NightrideClient {
    /// The API it talks to.
    public let api: NightrideAPI
    /// The client's state.
    public let system: System<ClientState, ClientEvent>
    /// The journal behind `system`, when the options name a file.
    public let journal: Journal<ClientState, ClientEvent>?

    let driverModeChanges: OptimisticResource<DriverModeChange>
    let rideActions: OptimisticResource<RideMutation>

    /// Connects the resources and starts the system (restored from the journal if any).
    ///
    /// - Throws: ``JournalError`` when the journal cannot be opened at all.
    public init(api: NightrideAPI, options: ClientOptions = ClientOptions(), isolation: isolated (any Actor)? = #isolation) throws(JournalError) {
        self.api = api
        let journal = try options.journalPath.map { path throws(JournalError) in
            try Journal<ClientState, ClientEvent>(
                at: path,
                configuration: JournalConfiguration(schema: ClientState.journalSchema, snapshotInterval: 200),
                transient: ClientState.isTransient
            )
        }
        self.journal = journal
        // Each resource pulls, follows its push socket and sends its mutations under a client
        // id of its own, so that every value says which of its mutations it contains.
        let server = api.endpoint(policy: options.policy, reconnectBackoff: options.reconnectBackoff, clock: options.clock)
        driverModeChanges = server.optimisticResource(
            at: "/me/driver-mode", for: DriverModeChange.self, store: journal?.mutationStore(named: "driver-mode", for: DriverModeChange.self),
            clientID: options.clientIDPrefix.map { ClientID(rawValue: $0 + "-driver-mode") } ?? ClientID()
        )
        rideActions = server.optimisticResource(
            at: "/me/ride", for: RideMutation.self, store: journal?.mutationStore(named: "ride", for: RideMutation.self),
            clientID: options.clientIDPrefix.map { ClientID(rawValue: $0 + "-ride") } ?? ClientID())
        let feedbacks = Self.feedbacks(
            api: api,
            driverModeChanges: driverModeChanges,
            rideActions: rideActions,
            options: options
        )
        let monitor = options.inspector?.monitor(named: "client \(api.user)", of: ClientState.self, ClientEvent.self)
        if let journal {
            system = System(
                journal: journal, initialState: ClientState(user: api.user), reduce: ClientState.reduce, feedbacks: feedbacks, monitor: monitor,
                isolation: isolation)
        } else {
            system = System(
                initialState: ClientState(user: api.user), reduce: ClientState.reduce, feedbacks: feedbacks, monitor: monitor, isolation: isolation)
        }
        monitor?.attach(to: system)
        // A development tool: the inspector's page may send the client events (its token is
        // the inspector's owner's alone).
        monitor?.acceptEvents(into: system)
        options.inspector?.watch(rideActions, named: "ride \(api.user)")
        options.inspector?.watch(driverModeChanges, named: "driver mode \(api.user)")
        system.send(.sessionStarted)
    }

    /// The current state.
    public var state: ClientState {
        system.state
    }

    /// Does what the user asked; returns the id of the mutation it queued, if it queued one.
    @discardableResult
    public func perform(_ action: UserAction) -> MutationID? {
        switch action {
        case .toggleDriverMode:
            // The state as the user saw it: every earlier press is in it, each having been
            // taken into the state in the same step as it was queued.
            let shown = state.driverMode.value ?? false
            return system.mutate(driverModeChanges, DriverModeChange(on: !shown), event: Self.shown)
        case .requestRide(let destination):
            return ride(.request(destination: destination))
        case .cancelRide:
            return ride(.cancel)
        case .acceptRide:
            return ride(.accept)
        case .arrive:
            return ride(.arrive)
        case .finishRide:
            return ride(.finish)
        case .finishSurvey:
            return ride(.finishSurvey)
        case .rateRide(let stars):
            return ride(.rate(stars: stars))
        case .typeDestination(let text):
            system.send(.searchTyped(text))
        case .openHistory:
            system.send(.historyOpened)
        case .scrollHistory:
            system.send(.historyScrolledToEnd)
        case .dismissError:
            system.send(.errorDismissed)
        case .refresh:
            refresh()
        }
        return nil
    }

    /// Queues a ride action, shown in the state as it returns.
    private func ride(_ action: RideAction) -> MutationID {
        system.mutate(rideActions, RideMutation(action), event: Self.shown)
    }

    /// Pulls both resources now.
    public func refresh() {
        driverModeChanges.resource.refresh()
        rideActions.resource.refresh()
    }

    /// HTTP requests the two resources started, however many subscribers share them.
    public var requestsStarted: Int {
        driverModeChanges.resource.requestsStarted + rideActions.resource.requestsStarted
    }

    /// What each resource and its queue of mutations hold right now, below the client's state:
    /// the resource's version and flags, and each pending mutation's status. For the chaos
    /// run's report on a client that did not converge.
    package var diagnosis: String {
        "driver mode " + Self.diagnosis(of: driverModeChanges) + "; ride " + Self.diagnosis(of: rideActions)
    }

    private static func diagnosis<M: Mutation>(of queue: OptimisticResource<M>) -> String {
        let resource = queue.resource
        let status = resource.status
        let flags = [
            status.isLoading ? "loading" : nil, status.isSlow ? "slow" : nil, status.isOffline ? "offline" : nil,
            status.isRetrying ? "retrying" : nil, status.failure.map { "failed: \($0.message)" },
            status.pushFailure.map { "push failed: \($0.message)" },
        ].compactMap { $0 }
        let mutations = queue.status.map { $0.mutations.map { "\($0.id.rawValue) \($0.status)" }.joined(separator: ", ") } ?? "not restored"
        let confirmed = queue.status?.confirmed.map { "\($0.version) last \(String(describing: $0.lastMutationID))" } ?? "none"
        return "[resource at \(status.value.map { "\($0.version) last \(String(describing: $0.lastMutationID))" } ?? "none")"
            + " \(flags.isEmpty ? "idle" : flags.joined(separator: " ")), \(resource.requestsStarted) requests;"
            + " queue confirmed \(confirmed), mutations: \(mutations)]"
    }

    /// Subscribers per resource that share each request, for the demo's count of requests
    /// saved: one, the optimistic resource, which hands the screen value and health together.
    public static let subscribersPerResource = 1

    /// Stops the system and the resources (their sockets close now, whoever still holds the
    /// client) and commits the journal.
    public func stop() {
        system.stop()
        // Each stops its resource too: both were made for it alone.
        driverModeChanges.stop()
        rideActions.stop()
        journal?.close()
    }

    // MARK: Wiring

    /// The event that brings the driver mode's status into the state: from its feedback, and
    /// from a key press in the same step.
    nonisolated private static func shown(_ status: OptimisticStatus<DriverModeChange>) -> ClientEvent {
        .driverMode(ResourceSnapshot(status))
    }

    /// The event that brings the ride's status into the state.
    nonisolated private static func shown(_ status: OptimisticStatus<RideMutation>) -> ClientEvent {
        .ride(ResourceSnapshot(status))
    }

    private static func feedbacks(
        api: NightrideAPI,
        driverModeChanges: OptimisticResource<DriverModeChange>,
        rideActions: OptimisticResource<RideMutation>,
        options: ClientOptions
    ) -> [Feedback<ClientState, ClientEvent>] {
        [
            .resource(driverModeChanges, event: shown),
            .resource(rideActions, event: shown),
            .refusals(of: driverModeChanges) { .actionRefused("driver mode: \($0.error.message)") },
            .refusals(of: rideActions) { .actionRefused("\($0.mutation?.action.name.rawValue ?? "ride"): \($0.error.message)") },
            .liveSearch(
                \.search,
                event: { event in
                    switch event {
                    case .typed(let text): .searchTyped(text)
                    case .loaded(let query, let places): .searchLoaded(query: query, places)
                    case .failed(let query, let message): .searchFailed(query: query, message)
                    }
                },
                debounce: options.searchDebounce,
                clock: options.clock,
                search: { query in try await api.places(matching: query) }
            ),
            // The cyclic dependency: the next page's address comes from the previous page.
            .react(query: \.history.pageToLoad) { address in
                do {
                    return .historyLoaded(try await api.history(at: address), from: address)
                } catch {
                    return .historyFailed("\(error)", from: address)
                }
            },
        ]
    }
}

/// How a client connects: its journal, its resources' policy, its clock.
public struct ClientOptions: Sendable {
    /// The journal file; `nil` keeps the state in memory only.
    public var journalPath: String?
    /// Retries, polling, the slow signal.
    public var policy: ResourcePolicy
    /// The first wait before reconnecting a push channel.
    public var reconnectBackoff: Duration
    /// The pause after the last keystroke before a search.
    public var searchDebounce: Duration
    /// The clock of every timer.
    public var clock: any Clock<Duration>
    /// Records what the client's system does for an inspector; `nil`, the default, records
    /// nothing.
    public var inspector: Inspector?
    /// The start of its resources' client ids (`<prefix>-driver-mode`, `<prefix>-ride`); `nil`,
    /// the default, draws new ones. A simulation names them, so that its run depends on its
    /// seed alone.
    public var clientIDPrefix: String?

    /// Defaults fit for a demo on loopback: slow after 1 s, reconnects fast, polls once a minute.
    public init(
        journalPath: String? = nil,
        policy: ResourcePolicy? = nil,
        reconnectBackoff: Duration = .milliseconds(100),
        searchDebounce: Duration = .milliseconds(250),
        clock: any Clock<Duration> = ContinuousClock(),
        inspector: Inspector? = nil,
        clientIDPrefix: String? = nil
    ) {
        self.clientIDPrefix = clientIDPrefix
        self.journalPath = journalPath
        self.policy = policy ?? Self.demoPolicy
        self.reconnectBackoff = reconnectBackoff
        self.searchDebounce = searchDebounce
        self.clock = clock
        self.inspector = inspector
    }

    /// The policy of the defaults. Its resources poll once a minute, the library's default,
    /// and only while their push socket is open: pushes bring every change then, and a poll
    /// only guards against one the server failed to send.
    public static var demoPolicy: ResourcePolicy {
        var policy = ResourcePolicy()
        policy.slowThreshold = .seconds(1)
        policy.initialBackoff = .milliseconds(100)
        policy.maxBackoff = .seconds(1)
        policy.maxRetries = 10
        // A request the server accepted but never answers is retried after 10 s, not 30.
        policy.requestTimeout = .seconds(10)
        policy.gracePeriod = .seconds(1)
        return policy
    }
}
