import Foundation
import NightrideClient

/// What the terminal UI keeps on top of ``ClientState``: where the keyboard goes and which row is
/// selected. It is purely presentational, so it lives here rather than in the journaled client
/// state: a relaunch starts with the box focused and the history closed.
public struct ViewState: Sendable, Equatable {
    /// Whether the destination box takes the keys on the passenger's "Where to?" screen. Tab
    /// switches between the box and the command keys, so that letters never do two things.
    public var searchFocused = true
    /// Whether the history pane is shown (and takes the arrow keys).
    public var historyOpen = false
    /// The highlighted search result.
    public var resultSelection = 0
    /// The highlighted history row.
    public var historySelection = 0
    /// The time zone the history's dates are shown in: the machine's.
    public var timeZone = TimeZone.current

    /// The box focused, the history closed, nothing selected, dates in the machine's time zone.
    public init(
        searchFocused: Bool = true, historyOpen: Bool = false, resultSelection: Int = 0, historySelection: Int = 0,
        timeZone: TimeZone = .current
    ) {
        self.searchFocused = searchFocused
        self.historyOpen = historyOpen
        self.resultSelection = resultSelection
        self.historySelection = historySelection
        self.timeZone = timeZone
    }

    /// Where the keys go on `screen`.
    public func focus(on screen: Screen) -> Focus {
        if historyOpen { return .history }
        if screen == .passengerRequesting && searchFocused { return .search }
        return .commands
    }

    /// The screen changed: coming back to "Where to?" from a ride (a cancel, a finished survey)
    /// leaves the keyboard with the command letters the user was pressing there, so that the
    /// next letter is not typed into the box; Tab hands it to the box. The first "Where to?"
    /// after connecting keeps the box focused, as at launch.
    public mutating func screenChanged(from old: Screen, to new: Screen) {
        guard old != new, new == .passengerRequesting else { return }
        resultSelection = 0
        if old != .connecting { searchFocused = false }
    }
}

/// Where the keyboard goes.
public enum Focus: Sendable, Equatable {
    /// Printable keys edit the destination; arrows pick a result; Enter requests the ride.
    case search
    /// Letters are commands (`d`, `r`, `c`, …).
    case commands
    /// Letters are commands; arrows scroll the history.
    case history
}
