import NightrideClient
import NightrideModel

/// What a key press asks of the running UI, besides changing the ``ViewState``.
public enum UICommand: Sendable, Equatable {
    /// Hand this action to the client.
    case perform(UserAction)
    /// Leave the UI (and restore the terminal).
    case quit
    /// Clear the terminal and draw everything again (Ctrl-L, after garbage on the screen).
    case redraw
}

/// The key bindings, as a pure function of the key, the client state and the view state, so
/// that every binding is testable without a terminal.
///
/// The search box and the command letters never compete: while the box has the focus, every
/// printable key is typed into it and Tab (or Escape) hands the keyboard to the commands; on the
/// other screens there is no box and letters are commands at once. Ctrl-C quits from anywhere.
public enum KeyMap {
    /// The new view state and the commands for `key`.
    public static func handle(_ key: Key, state: ClientState, view: ViewState) -> (view: ViewState, commands: [UICommand]) {
        var view = view
        switch key {
        case .control("c"):
            return (view, [.quit])
        case .control("l"):
            return (view, [.redraw])
        default:
            break
        }
        let commands: [UICommand]
        switch view.focus(on: state.screen) {
        case .search:
            commands = searchKey(key, state: state, view: &view)
        case .commands:
            commands = commandKey(key, state: state, view: &view)
        case .history:
            commands = historyKey(key, state: state, view: &view)
        }
        return (view, commands)
    }

    // MARK: Focus: the destination box

    private static func searchKey(_ key: Key, state: ClientState, view: inout ViewState) -> [UICommand] {
        let text = state.search.text
        let results = state.search.shownPlaces
        switch key {
        case .character(let character):
            view.resultSelection = 0
            return [.perform(.typeDestination(text + String(character)))]
        case .backspace:
            guard !text.isEmpty else { return [] }
            view.resultSelection = 0
            return [.perform(.typeDestination(String(text.dropLast())))]
        case .control("u"):
            view.resultSelection = 0
            return text.isEmpty ? [] : [.perform(.typeDestination(""))]
        case .up:
            view.resultSelection = max(0, min(view.resultSelection, results.count - 1) - 1)
            return []
        case .down:
            view.resultSelection = max(0, min(view.resultSelection + 1, results.count - 1))
            return []
        case .enter:
            guard !results.isEmpty else { return [] }
            let place = results[min(max(0, view.resultSelection), results.count - 1)]
            // The search is over: the next "Where to?" (after a cancel or a ride) starts empty.
            view.resultSelection = 0
            return [.perform(.requestRide(to: place)), .perform(.typeDestination(""))]
        case .tab, .backTab, .escape:
            view.searchFocused = false
            return []
        default:
            return []
        }
    }

    // MARK: Focus: command letters

    private static func commandKey(_ key: Key, state: ClientState, view: inout ViewState) -> [UICommand] {
        switch key {
        case .tab, .backTab:
            if state.screen == .passengerRequesting { view.searchFocused = true }
            return []
        case .escape:
            return state.showsDismissible ? [.perform(.dismissError)] : []
        case .character(let letter):
            return letterCommand(letter, state: state, view: &view)
        default:
            return []
        }
    }

    // MARK: Focus: the history pane

    private static func historyKey(_ key: Key, state: ClientState, view: inout ViewState) -> [UICommand] {
        let history = state.history
        switch key {
        case .up:
            view.historySelection = max(0, min(view.historySelection, history.rides.count - 1) - 1)
            return []
        case .down:
            view.historySelection = max(0, min(view.historySelection + 1, history.rides.count - 1))
            return nextPageIfAtEnd(state: state, view: view)
        case .tab, .backTab, .escape:
            view.historyOpen = false
            return []
        case .character(let letter):
            return letterCommand(letter, state: state, view: &view)
        default:
            return []
        }
    }

    /// Asks for the next page once the selection is on the last row loaded: the history's own
    /// feedback then loads it. A failed page is retried the same way, by scrolling again.
    private static func nextPageIfAtEnd(state: ClientState, view: ViewState) -> [UICommand] {
        let history = state.history
        guard history.nextPage != nil, !history.wantsMore, view.historySelection >= history.rides.count - 1 else { return [] }
        return [.perform(.scrollHistory)]
    }

    // MARK: Letters

    /// A command letter. The ride keys only act on the screens that show them, so a stray key
    /// never sends a request the server would refuse.
    private static func letterCommand(_ letter: Character, state: ClientState, view: inout ViewState) -> [UICommand] {
        let screen = state.screen
        switch letter {
        case "q":
            return [.quit]
        case "d" where state.offersDriverMode:
            return [.perform(.toggleDriverMode)]
        case "r":
            return [.perform(.refresh)]
        case "x":
            return state.showsDismissible ? [.perform(.dismissError)] : []
        case "h":
            view.historyOpen.toggle()
            guard view.historyOpen else { return [] }
            view.historySelection = 0
            // The first page again: rides ended since it was loaded come in at the top.
            return [.perform(.openHistory)]
        case "c" where screen == .passengerWaiting || screen == .passengerDriverComing:
            return [.perform(.cancelRide)]
        case "a" where screen == .driverAccepting:
            return [.perform(.acceptRide)]
        case "v" where screen == .driverGoingToPassenger:
            return [.perform(.arrive)]
        case "f" where screen == .riding && state.ride.value?.ride?.driver == state.user:
            return [.perform(.finishRide)]
        case "s" where screen == .survey:
            return [.perform(.finishSurvey)]
        case let digit where screen == .survey && digit.wholeNumberValue.map(RideAction.stars.contains) == true:
            return [.perform(.rateRide(stars: digit.wholeNumberValue ?? 0))]
        default:
            return []
        }
    }
}
