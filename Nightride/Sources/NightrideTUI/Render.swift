import Foundation
import NightrideClient
import NightrideModel
import StateLoopSync

/// The whole screen for `state`, as `height` lines of exactly `width` columns each (plain text,
/// no escape sequences: the terminal writer adds the colours), so that it can be checked in a
/// test without a terminal.
///
/// From top to bottom: a title bar (user, driver mode, screen title), the current screen, the
/// history pane when open, the status line (``ClientState/statusLine``) and the keys that work
/// with the current focus. With `preview`, a banner replaces the title bar: the state is a past
/// one an inspector shows.
///
/// Every text from the server or the user (names, places, error messages, what was typed) goes
/// through `terminalSafe(_:)` where it enters a line, so that no control character reaches the
/// terminal; layout widths are measured on the safe text, which is what is shown.
public func render(_ state: ClientState, _ view: ViewState = ViewState(), width: Int, height: Int, preview: Bool = false) -> [String] {
    let width = max(width, 1)
    let height = max(height, 1)
    guard height >= 4, width >= 20 else {
        return fitted(["Nightride: the terminal is too small"], width: width, height: height)
    }
    let focus = view.focus(on: state.screen)
    let bodyHeight = height - 3
    let historyHeight = view.historyOpen ? min(bodyHeight, max(3, bodyHeight / 2)) : 0
    let mainHeight = bodyHeight - historyHeight

    var lines = [preview ? previewBanner(width: width) : titleBar(state, width: width)]
    lines += fitted(mainArea(state, view, focus: focus, width: width, height: mainHeight), width: width, height: mainHeight)
    if view.historyOpen {
        lines += fitted(
            historyPane(state.history, user: state.user, view: view, width: width, height: historyHeight), width: width,
            height: historyHeight)
    }
    lines.append(fit(" " + statusMessage(state), width: width))
    lines.append(fit(" " + keyHelp(state, focus: focus), width: width))
    return lines
}

// MARK: Title bar and status

/// Replaces the title bar while an inspector previews a past state: the longest wording that
/// fits the width, so that what ends the preview is never cut off when it can be said.
private func previewBanner(width: Int) -> String {
    let wordings = [
        " PREVIEW · a past state, shown by the inspector · the live client goes on · \"Back to live\" in the inspector ends it",
        " PREVIEW · a past state from the inspector · \"Back to live\" there ends it",
        " PREVIEW · \"Back to live\" in the inspector ends it",
        " PREVIEW · a past state",
    ]
    return fit(wordings.first { $0.count <= width } ?? wordings[wordings.count - 1], width: width)
}

private func titleBar(_ state: ClientState, width: Int) -> String {
    let mode = state.driverMode.value.map { $0 ? "on" : "off" } ?? "?"
    let left = " Nightride · \(terminalSafe(state.user)) · driver mode \(mode)"
    let right = state.screen.title + " "
    let gap = width - left.count - right.count
    return fit(gap >= 1 ? left + String(repeating: " ", count: gap) + right : left + " · " + right, width: width)
}

private func statusMessage(_ state: ClientState) -> String {
    // The status line quotes the server's error messages.
    let line = terminalSafe(state.statusLine)
    return !state.showsDismissible || line.isEmpty ? line : line + " (x to dismiss)"
}

private func keyHelp(_ state: ClientState, focus: Focus) -> String {
    switch focus {
    case .search:
        return "type a destination · ↑↓ choose · Enter request · Tab commands · Ctrl-C quit"
    case .commands:
        let base = "r refresh" + (state.offersDriverMode ? " · d driver mode" : "") + " · h history · q quit"
        return state.screen == .passengerRequesting ? base + " · Tab search box" : base
    case .history:
        return "↑↓ scroll · h close history · r refresh" + (state.offersDriverMode ? " · d driver mode" : "") + " · q quit"
    }
}

extension ClientState {
    /// Whether the `d` key switches driver mode: not while the user rides as a passenger,
    /// which the server refuses.
    var offersDriverMode: Bool {
        !(ride.value?.isUnderway(asPassenger: user) ?? false)
    }

    /// Whether the status line says something `x` dismisses: a refusal, or the server's news.
    var showsDismissible: Bool {
        refusal != nil || notice != nil
    }
}

// MARK: Screens

private func mainArea(_ state: ClientState, _ view: ViewState, focus: Focus, width: Int, height: Int) -> [String] {
    let ride = state.ride.value?.ride
    let destination = ride.map { placeText($0.destination) } ?? "?"
    // Who rides and who drives are names from the server.
    let driver = ride?.driver.map(terminalSafe)
    let passenger = ride.map { terminalSafe($0.passenger) }
    switch state.screen {
    case .connecting:
        return ["", "  Connecting to the server…", "", "  r  retry now"]
    case .passengerRequesting:
        return searchScreen(state.search, view: view, focused: focus == .search, width: width, height: height)
    case .passengerWaiting:
        return ["", "  Looking for a driver…", "  To: \(destination)", "", "  c  cancel the request"]
    case .passengerDriverComing:
        return ["", "  Your driver \(driver ?? "") is on the way.", "  To: \(destination)", "", "  c  cancel the ride"]
    case .driverWaiting:
        return ["", "  Driver mode is on: waiting for a ride request…", "", "  d  switch driver mode off"]
    case .driverAccepting:
        return [
            "", "  \(passenger ?? "A passenger") asks for a ride.", "  To: \(destination)", "",
            "  a  accept the ride", "  d  switch driver mode off (declines it)",
        ]
    case .driverGoingToPassenger:
        return [
            "", "  Pick up \(passenger ?? "your passenger").", "  Then to: \(destination)", "",
            "  v  arrived: the passenger is in the car",
        ]
    case .riding:
        if ride?.driver == state.user {
            return [
                "", "  Driving \(passenger ?? "your passenger").", "  To: \(destination)", "",
                "  f  finish the ride (drop-off)",
            ]
        }
        return ["", "  On the way with \(driver ?? "your driver").", "  To: \(destination)"]
    case .survey:
        return [
            "", "  How was your ride with \(driver ?? "your driver")?", "  To: \(destination)", "",
            "  1 to 5  rate it, from 1 star (bad) to 5 (excellent)",
            "  s       skip the survey",
        ]
    }
}

/// "Where to?": the box, the results with the selection, and what the search is doing.
private func searchScreen(_ search: SearchState<[Place]>, view: ViewState, focused: Bool, width: Int, height: Int) -> [String] {
    let boxWidth = max(10, min(width - 4, 50))
    let inner = boxWidth - 4
    // The end of a long text stays visible, as in any one-line input. What was typed may have
    // been pasted, control characters and all.
    let text = terminalSafe(search.text)
    let typed = focused ? text + "_" : text
    let shown = typed.count > inner ? "…" + typed.suffix(inner - 1) : typed
    var lines = [
        "",
        focused ? "  Where to?  (typing; Tab for commands)" : "  Where to?  (Tab to type a destination)",
        "  ┌" + String(repeating: "─", count: boxWidth - 2) + "┐",
        "  │ " + pad(shown, to: inner) + " │",
        "  └" + String(repeating: "─", count: boxWidth - 2) + "┘",
    ]
    let results = search.shownPlaces.map { (name: terminalSafe($0.name), area: terminalSafe($0.area)) }
    let room = max(1, height - lines.count - 1)
    if let failure = search.failure {
        lines.append("  Search failed: \(terminalSafe(failure)) (type to retry)")
    } else if search.text.count < search.minimumLength {
        lines.append(search.text.isEmpty ? "  Type a place or a district." : "  Type at least \(search.minimumLength) letters.")
    } else if results.isEmpty {
        lines.append(search.isSearching ? "  Searching…" : "  No place matches “\(text)”.")
    } else {
        let selection = min(max(0, view.resultSelection), results.count - 1)
        let nameWidth = min(results.map(\.name.count).max() ?? 0, max(10, width / 2))
        let first = scrollOffset(selection: selection, count: results.count, rows: room)
        for index in first..<min(results.count, first + room) {
            let place = results[index]
            let marker = index == selection ? (focused ? "> " : "* ") : "  "
            lines.append("  " + marker + pad(place.name, to: nameWidth) + "  " + place.area)
        }
        lines.append(focused ? (search.isSearching ? "  Searching…" : "  ↑↓ choose · Enter request a ride") : "")
    }
    return lines
}

extension SearchState<[Place]> {
    /// The places offered for the text in the box. Text too short to be searched offers none:
    /// the results kept from an earlier query would never be replaced, and Enter must not pick
    /// a place the box no longer shows.
    var shownPlaces: [Place] {
        text.count < minimumLength ? [] : results ?? []
    }
}

// MARK: History

private func historyPane(_ history: HistoryState, user: String, view: ViewState, width: Int, height: Int) -> [String] {
    let selection = view.historySelection
    let count = history.rides.count
    let rides = count == 1 ? "1 ride" : "\(count) rides"
    let summary = history.nextPage == nil ? rides : "\(rides) loaded, more below"
    let title = "── History · \(summary) "
    var lines = [title + String(repeating: "─", count: max(0, width - title.count))]
    var rows = history.rides.map { ride in historyRow(ride, user: user, timeZone: view.timeZone) }
    if let failure = history.failure {
        rows.append("    Failed to load: \(terminalSafe(failure)) (↓ to retry)")
    } else if history.wantsMore {
        rows.append("    Loading…")
    } else if history.nextPage == nil {
        rows.append(count == 0 ? "    No rides yet." : "    End of the history.")
    }
    let room = max(1, height - 1)
    let selected = min(max(0, selection), count - 1)
    // Keep the row after the selection in view too, so that "Loading…" shows as it happens.
    let first = scrollOffset(selection: min(selected + 1, rows.count - 1), count: rows.count, rows: room)
    for index in first..<min(rows.count, first + room) {
        let marker = index == selected && index < count ? "> " : "  "
        lines.append(marker + rows[index])
    }
    return lines
}

private func historyRow(_ ride: Ride, user: String, timeZone: TimeZone) -> String {
    let place = placeText(ride.destination)
    let when = ride.endedAt.map { historyDate($0, in: timeZone) } ?? String(repeating: " ", count: 16)
    if ride.driver == user {
        return "\(when)  drove \(terminalSafe(ride.passenger)) to \(place)"
    }
    let rated = ride.rating.map { " · " + String(repeating: "★", count: max(0, min($0, 5))) } ?? ""
    return "\(when)  rode to \(place)" + (ride.driver.map { " with \(terminalSafe($0))" } ?? "") + rated
}

/// `date` as `2026-11-30 04:05` in `timeZone`: the same in every locale, and sorted as text.
private func historyDate(_ date: Date, in timeZone: TimeZone) -> String {
    var calendar = Calendar(identifier: .gregorian)
    calendar.timeZone = timeZone
    let parts = calendar.dateComponents([.year, .month, .day, .hour, .minute], from: date)
    func two(_ number: Int?) -> String {
        let text = String(number ?? 0)
        return text.count < 2 ? "0" + text : text
    }
    return "\(parts.year ?? 0)-\(two(parts.month))-\(two(parts.day)) \(two(parts.hour)):\(two(parts.minute))"
}

/// "Name, area", safe to show: both come from the server.
private func placeText(_ place: Place) -> String {
    terminalSafe("\(place.name), \(place.area)")
}

// MARK: Layout helpers

/// The first row to show so that `selection` is in the last of `rows` rows once it goes past.
private func scrollOffset(selection: Int, count: Int, rows: Int) -> Int {
    max(0, min(selection - rows + 1, count - rows))
}

/// `lines` cut or padded to `height` lines of `width` columns.
func fitted(_ lines: [String], width: Int, height: Int) -> [String] {
    let kept = lines.prefix(height).map { fit($0, width: width) }
    return kept + Array(repeating: String(repeating: " ", count: width), count: height - kept.count)
}

/// `line` cut (with an ellipsis) or padded to `width` columns. A column is a `Character`: the
/// places and names shown are Latin text, one column per grapheme.
func fit(_ line: String, width: Int) -> String {
    guard line.count > width else { return pad(line, to: width) }
    return String(line.prefix(max(0, width - 1))) + "…"
}

func pad(_ text: String, to width: Int) -> String {
    text.count >= width ? String(text.prefix(width)) : text + String(repeating: " ", count: width - text.count)
}
