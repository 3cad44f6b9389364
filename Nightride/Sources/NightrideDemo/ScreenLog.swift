import NightrideClient
import NightrideHarness
import NightrideServer
import StateLoop

/// The screens each watched client showed, on the clock of the server's change log, one entry
/// per change of what is shown (screen, versions behind it, optimism).
@MainActor
final class ScreenLog {
    private let now: @MainActor () -> Duration
    private let onScreenChange: (ScreenShown, _ previous: Screen?) -> Void
    private(set) var screens: [String: [ScreenShown]] = [:]
    private var subscriptions: [StateSubscription] = []

    /// A log timed by `now` (the time basis of the server's change log); `onScreenChange` hears
    /// of each new screen (not of a new version behind the same screen).
    init(now: @escaping @MainActor () -> Duration, onScreenChange: @escaping (ScreenShown, _ previous: Screen?) -> Void = { _, _ in }) {
        self.now = now
        self.onScreenChange = onScreenChange
    }

    /// Records what `client` shows, from now until ``stop()``.
    func watch(_ client: NightrideClient) {
        // A client that replaces a signed-out one goes on with its user's list.
        screens[client.api.user, default: []] += []
        subscriptions.append(client.system.observe { [unowned self] state in self.record(state) })
    }

    /// What `user`'s client showed, in order.
    func screens(of user: String) -> [ScreenShown] {
        screens[user] ?? []
    }

    func stop() {
        subscriptions.removeAll()
    }

    private func record(_ state: ClientState) {
        let shown = ScreenShown(time: now(), state: state)
        let previous = screens[state.user]?.last
        if let previous, previous.showsSameAs(shown) { return }
        screens[state.user, default: []].append(shown)
        if previous?.screen != shown.screen {
            onScreenChange(shown, previous?.screen)
        }
    }
}

extension NightrideClient {
    /// Whether the client shows the server's newest versions of both values, with nothing
    /// pending: converged.
    func showsNewest(of server: ServerTruth) -> Bool {
        let truth = server.snapshot(of: api.user)
        return truth?.driverMode.version == state.driverMode.confirmedVersion
            && truth?.ride.version == state.ride.confirmedVersion
            && !state.isOptimistic
    }
}
