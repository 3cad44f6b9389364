import NightrideModel
import StateLoopSync

/// Everything a Nightride client shows. The screen is derived from the two backend-owned
/// values; the rest is the client's own (search box, history list, last error). Journaled, so a
/// relaunched client shows its last screen at once.
public struct ClientState: Codable, Sendable, Equatable {
    /// Who is logged in.
    public var user: String
    /// The user's driver mode as shown.
    public var driverMode = ResourceSnapshot<Bool>()
    /// The user's ride status as shown.
    public var ride = ResourceSnapshot<RideStatus>()
    /// The ride history, page by page.
    public var history = HistoryState()
    /// The destination search box. Not journaled: a relaunch starts with an empty box.
    public var search = SearchState<[Place]>(minimumLength: 2)
    /// Why the last action was refused, until dismissed or replaced. (Stored as `lastError`
    /// before version 3 of the journaled state: see `ClientState.journalSchema`.)
    public var refusal: String?
    /// What the server changed that the user did not do, said once (a ride the passenger
    /// cancelled, driver mode switched off for inactivity), until dismissed or the user's next
    /// change. Not journaled: it is news of this launch.
    public var notice: String?

    /// A client of `user` that knows nothing yet.
    public init(user: String) {
        self.user = user
    }

    /// The screen, derived from the driver mode and the ride status.
    public var screen: Screen {
        Screen(driverMode: driverMode.value, ride: ride.value, user: user)
    }

    /// Whether an optimistic change is shown that the server has not confirmed yet.
    public var isOptimistic: Bool {
        driverMode.pendingMutations > 0 || ride.pendingMutations > 0
    }

    /// The server no longer accepts this client's session: the user must sign in again.
    public var isSignedOut: Bool {
        driverMode.health.isSignedOut || ride.health.isSignedOut
    }

    /// The status line: signed out, loading, slow, offline, errors; empty when all is well.
    ///
    /// Changes waiting for the server are named apart from the rest ("waiting to send (2)"):
    /// they are kept and sent once the server is back, never refused for its absence.
    public var statusLine: String {
        let healths = [driverMode.health, ride.health]
        let waiting = healths.reduce(0) { $0 + $1.waitingToSend }
        let held = healths.reduce(0) { $0 + $1.couldNotSend }
        let unsent = [waiting > 0 ? "waiting to send (\(waiting))" : nil, held > 0 ? "could not send (\(held))" : nil].compactMap { $0 }
        func line(_ text: String) -> String {
            ([text] + unsent).joined(separator: " · ")
        }
        if isSignedOut { return line("Signed out: sign in again") }
        if healths.contains(where: \.isOffline) { return line("Offline: showing the last known state") }
        if healths.contains(where: \.isSlow) { return line("Taking longer than expected…") }
        if let failure = healths.compactMap(\.failure).first { return line("Error: \(failure) (r to retry)") }
        if let refusal { return line("Refused: \(refusal)") }
        if let notice { return line(notice) }
        if healths.contains(where: \.isLoading) { return line("Loading…") }
        if !unsent.isEmpty { return unsent.joined(separator: " · ") }
        if isOptimistic { return "Sending…" }
        return ""
    }

    /// Applies one event.
    public static func reduce(_ state: inout ClientState, _ event: ClientEvent) {
        switch event {
        case .driverMode(let latest):
            let before = state.driverMode
            state.driverMode.update(to: latest)
            state.noticeChange(driverMode: before)
        case .ride(let latest):
            let before = state.ride
            state.ride.update(to: latest)
            state.noticeChange(ride: before)
        case .sessionStarted:
            state.driverMode.health = ResourceHealth(isLoading: true)
            state.ride.health = ResourceHealth(isLoading: true)
        case .searchTyped(let text):
            state.search.apply(.typed(text))
        case .searchLoaded(let query, let places):
            state.search.apply(.loaded(query: query, places))
        case .searchFailed(let query, let message):
            state.search.apply(.failed(query: query, message))
        case .historyScrolledToEnd:
            state.history.scrolledToEnd()
        case .historyOpened:
            state.history.reload()
        case .historyLoaded(let page, let address):
            state.history.loaded(page, from: address)
        case .historyFailed(let message, let address):
            state.history.failed(message, from: address)
        case .actionRefused(let message):
            state.refusal = message
        case .errorDismissed:
            state.refusal = nil
            state.notice = nil
        }
    }

    /// Says why driver mode went off when the server switched it off: the one change of it the
    /// user does not make is the inactivity timer's. A change of the user's own (queued, or
    /// rolled back as refused) is not news; the user's next change ends a notice.
    private mutating func noticeChange(driverMode before: ResourceSnapshot<Bool>) {
        if driverMode.pendingMutations > before.pendingMutations { notice = nil }
        guard before.pendingMutations == 0, driverMode.pendingMutations == 0 else { return }
        if before.value == true && driverMode.value == false {
            notice = "Driver mode went off: no driver activity for a while (d to switch it on)"
        }
    }

    /// Says why a ride offered to or accepted by the user as its driver went away: an accepted
    /// ride only goes when its passenger cancels it; an offer also goes when the server takes it
    /// back (driver mode off for inactivity, said by that notice), so it is said as withdrawn.
    private mutating func noticeChange(ride before: ResourceSnapshot<RideStatus>) {
        if ride.pendingMutations > before.pendingMutations { notice = nil }
        guard before.pendingMutations == 0, ride.pendingMutations == 0, ride.value == RideStatus.none, driverMode.value == true else { return }
        switch before.value {
        case .approaching(let gone) where gone.driver == user:
            notice = "\(gone.passenger) cancelled the ride to \(gone.destination.name)"
        case .incoming(let gone):
            notice = "\(gone.passenger)'s request for a ride to \(gone.destination.name) was withdrawn"
        default:
            break
        }
    }

    private enum CodingKeys: String, CodingKey {
        case user, driverMode, ride, history, refusal
    }

    /// Events that change only what is not journaled (the search box): reduced and shown, but
    /// never written, so that a relaunch does not bring the box back by replaying them.
    public static func isTransient(_ event: ClientEvent) -> Bool {
        switch event {
        case .searchTyped, .searchLoaded, .searchFailed, .sessionStarted: true
        default: false
        }
    }
}

/// What happens to a client: news from the server and the user's own doing.
public enum ClientEvent: Codable, Sendable, Equatable {
    /// The driver mode as shown (its value `nil` when not known yet), with its confirmed
    /// version, how many changes are pending and the resource's health (which the journal
    /// leaves out): one event per change of the resource.
    case driverMode(ResourceSnapshot<Bool>)
    /// The ride status as shown, as for the driver mode.
    case ride(ResourceSnapshot<RideStatus>)
    /// The user typed in the destination box.
    case searchTyped(String)
    /// The places for `query` arrived.
    case searchLoaded(query: String, [Place])
    /// The search for `query` failed.
    case searchFailed(query: String, String)
    /// The user scrolled to the end of the history.
    case historyScrolledToEnd
    /// The user opened the history: its first page is loaded again.
    case historyOpened
    /// A history page arrived from `from`.
    case historyLoaded(HistoryPage, from: String)
    /// A history page request failed.
    case historyFailed(String, from: String)
    /// The server refused an action; the optimistic change was rolled back.
    case actionRefused(String)
    /// The user dismissed the error.
    case errorDismissed
    /// A client started (a launch, or a new sign-in): how the last one's connection fared says
    /// nothing about this one's, so each resource shows as loading until it reports. Without
    /// it, a journal saved while signed out would sign the new session out at once.
    case sessionStarted
}
