import Foundation
import NightrideClient
import NightrideModel
import NightrideTUI
import StateLoopSync
import Testing

/// `render` is a pure function of the state, so every screen is checked as text.
@Suite("Terminal UI: render")
struct RenderTests {
    /// The frame as one string, after checking its shape: `height` lines of `width` columns.
    private func frame(_ state: ClientState, _ view: ViewState = ViewState(), width: Int = 100, height: Int = 30) -> (text: String, lines: [String]) {
        let lines = render(state, view, width: width, height: height)
        #expect(lines.count == height)
        #expect(lines.allSatisfy { $0.count == width }, "every line is exactly \(width) columns")
        return (lines.joined(separator: "\n"), lines)
    }

    @Test("every screen fills the terminal exactly, at any size")
    func shape() {
        let states = [
            Fixture.state(driverMode: nil, ride: nil),
            Fixture.searching("gare", loaded: [Fixture.gareDuNord, Fixture.gareDeLEst]),
            Fixture.state(ride: .pending(Fixture.ride(driver: nil))),
            Fixture.state(ride: .approaching(Fixture.ride())),
            Fixture.state(driverMode: true, ride: RideStatus.none),
            Fixture.state(user: "bob", driverMode: true, ride: .incoming(Fixture.ride())),
            Fixture.state(user: "bob", driverMode: true, ride: .approaching(Fixture.ride())),
            Fixture.state(ride: .riding(Fixture.ride())),
            Fixture.state(ride: .survey(Fixture.ride())),
        ]
        for state in states {
            for (width, height) in [(100, 30), (40, 10), (20, 4), (5, 2), (1, 1)] {
                _ = frame(state, ViewState(historyOpen: true), width: width, height: height)
                _ = frame(state, width: width, height: height)
            }
        }
    }

    @Test("the title bar names the user, the driver mode and the screen")
    func titleBar() {
        let lines = frame(Fixture.state(user: "bob", driverMode: true, ride: RideStatus.none)).lines
        #expect(lines[0].contains("bob"))
        #expect(lines[0].contains("driver mode on"))
        #expect(lines[0].hasSuffix("Waiting for a ride "))
        #expect(frame(Fixture.state(ride: RideStatus.none)).lines[0].contains("driver mode off"))
    }

    @Test("a preview from the inspector replaces the title bar with a banner, at any width; the screen below is the previewed state's")
    func previewBanner() {
        let state = Fixture.state(user: "bob", driverMode: true, ride: RideStatus.none)
        for width in [140, 110, 80, 60, 40, 20] {
            let lines = render(state, width: width, height: 12, preview: true)
            #expect(lines.count == 12 && lines.allSatisfy { $0.count == width })
            #expect(lines[0].hasPrefix(" PREVIEW"))
            if width >= 60 {
                #expect(lines[0].contains("\"Back to live\""), "what ends the preview is never cut at \(width) columns: \(lines[0])")
                #expect(!lines[0].contains("…"), "\(lines[0])")
            }
            #expect(Array(lines.dropFirst()) == Array(render(state, width: width, height: 12).dropFirst()))
        }
    }

    @Test("connecting: nothing known yet")
    func connecting() {
        let text = frame(Fixture.state(driverMode: nil, ride: nil)).text
        #expect(text.contains("Connecting…"))
        #expect(text.contains("Connecting to the server…"))
    }

    @Test("where to: an empty box, focused, with the typing keys at the bottom")
    func emptySearch() {
        let (text, lines) = frame(Fixture.state(ride: RideStatus.none))
        #expect(text.contains("Where to?  (typing; Tab for commands)"))
        #expect(text.contains("│ _ "))
        #expect(text.contains("Type a place or a district."))
        #expect(lines[29].contains("type a destination · ↑↓ choose · Enter request · Tab commands · Ctrl-C quit"))
    }

    @Test("where to: the results listed under the box, the selection marked")
    func searchResults() {
        let state = Fixture.searching("gare", loaded: [Fixture.gareDuNord, Fixture.gareDeLEst, Fixture.gareDeLyon])
        let text = frame(state, ViewState(resultSelection: 1)).text
        #expect(text.contains("│ gare_ "))
        #expect(text.contains("    Gare du Nord   Paris 10e"))
        #expect(text.contains("  > Gare de l'Est  Paris 10e"))
        #expect(text.contains("    Gare de Lyon   Paris 12e"))
        #expect(text.contains("↑↓ choose · Enter request a ride"))
    }

    @Test("where to: a selection past the results stays on the last one")
    func selectionClamped() {
        let state = Fixture.searching("gare", loaded: [Fixture.gareDuNord, Fixture.gareDeLEst])
        #expect(frame(state, ViewState(resultSelection: 9)).text.contains("> Gare de l'Est"))
    }

    @Test("where to: short text, searching, nothing found")
    func searchStates() {
        #expect(frame(Fixture.searching("g")).text.contains("Type at least 2 letters."))
        #expect(frame(Fixture.searching("gar")).text.contains("Searching…"))
        #expect(frame(Fixture.searching("zzz", loaded: [])).text.contains("No place matches “zzz”."))
        // The previous results stay shown while the next query loads.
        var state = Fixture.searching("gare", loaded: [Fixture.gareDuNord])
        ClientState.reduce(&state, .searchTyped("gare d"))
        let text = frame(state).text
        #expect(text.contains("> Gare du Nord"))
        #expect(text.contains("Searching…"))
    }

    @Test("where to: results are not offered once the text is too short to be searched")
    func staleResultsHidden() {
        var state = Fixture.searching("gare", loaded: [Fixture.gareDuNord])
        ClientState.reduce(&state, .searchTyped(""))
        let text = frame(state).text
        #expect(text.contains("Type a place or a district."))
        #expect(!text.contains("Gare du Nord"))
        #expect(KeyMap.handle(.enter, state: state, view: ViewState()).commands == [])
    }

    @Test("where to, box left with Tab: the command keys at the bottom")
    func searchUnfocused() {
        let state = Fixture.searching("gare", loaded: [Fixture.gareDuNord])
        let (text, lines) = frame(state, ViewState(searchFocused: false))
        #expect(text.contains("Where to?  (Tab to type a destination)"))
        #expect(text.contains("│ gare "))
        #expect(!text.contains("gare_"))
        #expect(text.contains("* Gare du Nord"))
        #expect(lines[29].contains("r refresh · d driver mode · h history · q quit · Tab search box"))
    }

    @Test("passenger waiting: the destination and c to cancel")
    func passengerWaiting() {
        let (text, lines) = frame(Fixture.state(ride: .pending(Fixture.ride(driver: nil))))
        #expect(lines[0].contains("Looking for a driver"))
        #expect(text.contains("To: Gare du Nord, Paris 10e"))
        #expect(text.contains("c  cancel the request"))
        #expect(lines[29].contains("r refresh · h history · q quit"), "no driver mode while riding as a passenger")
        #expect(!lines[29].contains("Tab") && !lines[29].contains("driver mode"))
    }

    @Test("passenger, driver coming: who and c to cancel")
    func passengerDriverComing() {
        let text = frame(Fixture.state(ride: .approaching(Fixture.ride()))).text
        #expect(text.contains("Your driver is on the way"))
        #expect(text.contains("Your driver bob is on the way."))
        #expect(text.contains("c  cancel the ride"))
    }

    @Test("driver waiting: d to switch off")
    func driverWaiting() {
        let text = frame(Fixture.state(driverMode: true, ride: RideStatus.none)).text
        #expect(text.contains("Driver mode is on: waiting for a ride request…"))
        #expect(text.contains("d  switch driver mode off"))
    }

    @Test("driver accepting: the passenger, the destination and a to accept")
    func driverAccepting() {
        let text = frame(Fixture.state(user: "bob", driverMode: true, ride: .incoming(Fixture.ride()))).text
        #expect(text.contains("New ride request"))
        #expect(text.contains("ann asks for a ride."))
        #expect(text.contains("To: Gare du Nord, Paris 10e"))
        #expect(text.contains("a  accept the ride"))
    }

    @Test("driver approaching: v when arrived")
    func driverGoingToPassenger() {
        let text = frame(Fixture.state(user: "bob", driverMode: true, ride: .approaching(Fixture.ride()))).text
        #expect(text.contains("Pick up your passenger"))
        #expect(text.contains("Pick up ann."))
        #expect(text.contains("v  arrived"))
    }

    @Test("riding: the driver gets f to finish, the passenger no key")
    func riding() {
        let driver = frame(Fixture.state(user: "bob", driverMode: true, ride: .riding(Fixture.ride()))).text
        #expect(driver.contains("Driving ann."))
        #expect(driver.contains("f  finish the ride"))
        let passenger = frame(Fixture.state(ride: .riding(Fixture.ride()))).text
        #expect(passenger.contains("On the way with bob."))
        #expect(!passenger.contains("f  finish"))
    }

    @Test("survey: a question, 1 to 5 to answer it, s to skip")
    func survey() {
        let text = frame(Fixture.state(ride: .survey(Fixture.ride()))).text
        #expect(text.contains("How was your ride?"))
        #expect(text.contains("How was your ride with bob?"))
        #expect(text.contains("1 to 5  rate it, from 1 star (bad) to 5 (excellent)"), "a question, and how to answer it")
        #expect(text.contains("s       skip the survey"))
    }

    @Test("status line: the client's own, and how to dismiss a refusal")
    func statusLine() {
        var state = Fixture.state(ride: .pending(Fixture.ride()))
        ClientState.reduce(&state, .actionRefused("cancel: too late"))
        let lines = frame(state).lines
        #expect(lines[28].contains("Refused: cancel: too late (x to dismiss)"))
        state.ride.health.isOffline = true
        #expect(frame(state).lines[28].contains("Offline: showing the last known state"))
        state.ride.health.waitingToSend = 2
        #expect(frame(state).lines[28].contains("Offline: showing the last known state · waiting to send (2)"))
        state.ride.health.isOffline = false
        state.refusal = nil
        #expect(frame(state).lines[28].contains("waiting to send (2)"))
        #expect(!frame(state).lines[28].contains("Sending"), "waiting is not sending")
    }

    @Test("history: a pane under the screen, rows from the user's side, the selection marked")
    func history() {
        var state = Fixture.state(ride: .pending(Fixture.ride()))
        ClientState.reduce(&state, .historyScrolledToEnd)
        ClientState.reduce(&state, .historyLoaded(Fixture.history(4, next: "/me/history?cursor=4"), from: "/me/history"))
        let (text, lines) = frame(state, ViewState(historyOpen: true, historySelection: 1))
        #expect(text.contains("Looking for a driver…"), "the screen stays above the pane")
        #expect(text.contains("── History · 4 rides loaded, more below ─"))
        #expect(text.contains("                    rode to Bastille, Paris 11e with Léa"), "a row of before rides were dated: no date")
        #expect(lines.contains { $0.hasPrefix("> ") && $0.contains("  drove Hugo to Gare de Lyon, Paris 12e") })
        #expect(lines[29].contains("↑↓ scroll · h close history"))
        // A dated ride shows when it ended, in the view's time zone.
        var dated = Fixture.state(ride: RideStatus.none)
        var ride = Fixture.ride()
        ride.endedAt = Date(timeIntervalSince1970: 1_800_000_000)
        ClientState.reduce(&dated, .historyLoaded(HistoryPage(items: [ride], next: nil), from: HistoryState.firstPage))
        let utc = frame(dated, ViewState(searchFocused: false, historyOpen: true, timeZone: TimeZone(identifier: "UTC")!)).text
        #expect(utc.contains("> 2027-01-15 08:00  rode to Gare du Nord, Paris 10e with bob"), "\(utc)")
        let paris = frame(dated, ViewState(searchFocused: false, historyOpen: true, timeZone: TimeZone(identifier: "Europe/Paris")!)).text
        #expect(paris.contains("> 2027-01-15 09:00  rode to Gare du Nord"), "\(paris)")

        ClientState.reduce(&state, .historyScrolledToEnd)
        #expect(frame(state, ViewState(historyOpen: true, historySelection: 3)).text.contains("Loading…"))
        ClientState.reduce(&state, .historyLoaded(Fixture.history(2, next: nil), from: "/me/history?cursor=4"))
        let last = frame(state, ViewState(historyOpen: true, historySelection: 5)).text
        #expect(last.contains("History · 6 rides "))
        #expect(last.contains("End of the history."))
    }

    @Test("history: opened again, its first page is loaded again; the rows shown stay until it comes, then a ride ended since is at the top")
    func historyReloads() {
        var state = Fixture.state(ride: RideStatus.none)
        ClientState.reduce(&state, .historyOpened)
        #expect(state.history.pageToLoad == HistoryState.firstPage)
        ClientState.reduce(&state, .historyLoaded(HistoryPage(items: [Fixture.ride()], next: nil), from: HistoryState.firstPage))
        var text = frame(state, ViewState(historyOpen: true)).text
        #expect(text.contains("── History · 1 ride ─"), "one ride, not \"1 rides\"")
        #expect(state.history.pageToLoad == nil)

        // Opened again after another ride: the old row stays while the page is on its way.
        ClientState.reduce(&state, .historyOpened)
        #expect(state.history.pageToLoad == HistoryState.firstPage)
        text = frame(state, ViewState(historyOpen: true)).text
        #expect(text.contains("History · 1 ride ") && text.contains("rode to Gare du Nord"))
        // A late page of the old list changes nothing.
        ClientState.reduce(&state, .historyLoaded(HistoryPage(items: [Fixture.ride()], next: nil), from: "/me/history?cursor=1"))
        #expect(state.history.rides.count == 1)
        let newer = Fixture.ride(to: Place(id: "bastille", name: "Bastille", area: "Paris 11e"))
        ClientState.reduce(&state, .historyLoaded(HistoryPage(items: [newer, Fixture.ride()], next: nil), from: HistoryState.firstPage))
        let lines = frame(state, ViewState(historyOpen: true)).lines
        #expect(lines.contains { $0.contains("History · 2 rides ") })
        #expect(lines.contains { $0.hasPrefix("> ") && $0.contains("rode to Bastille, Paris 11e") }, "the newest first, selected")
        #expect(!state.history.reloading && state.history.pageToLoad == nil)

        // A reload that fails keeps the rows and says so; scrolling or opening again retries.
        ClientState.reduce(&state, .historyOpened)
        ClientState.reduce(&state, .historyFailed("offline", from: HistoryState.firstPage))
        #expect(state.history.rides.count == 2 && state.history.failure == "offline" && state.history.pageToLoad == nil)
    }

    @Test("news the user did not make is said once, until dismissed or the next change: who cancelled, why driver mode went off")
    func notices() {
        let version = { (counter: UInt64) in Version(epoch: 1, counter: counter) }
        let accepted = Ride(id: "r1", passenger: "ann", driver: "bob", destination: Fixture.gareDuNord)
        var state = Fixture.state(user: "bob", driverMode: true, ride: .approaching(accepted))
        // The passenger cancels: the driver's ride goes, from the server.
        ClientState.reduce(&state, .ride(ResourceSnapshot(value: RideStatus.none, confirmedVersion: version(5))))
        #expect(state.notice == "ann cancelled the ride to Gare du Nord")
        #expect(frame(state).lines[28].contains("ann cancelled the ride to Gare du Nord (x to dismiss)"))
        #expect(KeyMap.handle(.character("x"), state: state, view: ViewState()).commands == [.perform(.dismissError)])
        ClientState.reduce(&state, .errorDismissed)
        #expect(state.notice == nil && !frame(state).lines[28].contains("cancelled"))

        // An offer taken back: withdrawn, whatever the reason. The server switches driver mode
        // off: said as such.
        state = Fixture.state(user: "bob", driverMode: true, ride: .incoming(Ride(id: "r2", passenger: "ann", destination: Fixture.bastille)))
        ClientState.reduce(&state, .ride(ResourceSnapshot(value: RideStatus.none, confirmedVersion: version(6))))
        #expect(state.notice == "ann's request for a ride to Bastille was withdrawn")
        ClientState.reduce(&state, .driverMode(ResourceSnapshot(value: false, confirmedVersion: version(7))))
        #expect(state.notice == "Driver mode went off: no driver activity for a while (d to switch it on)")
        // The user's next change ends it.
        ClientState.reduce(&state, .driverMode(ResourceSnapshot(value: true, confirmedVersion: version(7), pendingMutations: 1)))
        #expect(state.notice == nil)

        // The user's own switch, queued then confirmed, and one refused and rolled back: no news.
        state = Fixture.state(user: "bob", driverMode: true, ride: RideStatus.none)
        ClientState.reduce(&state, .driverMode(ResourceSnapshot(value: false, confirmedVersion: version(1), pendingMutations: 1)))
        ClientState.reduce(&state, .driverMode(ResourceSnapshot(value: false, confirmedVersion: version(2))))
        #expect(state.notice == nil)
        ClientState.reduce(&state, .driverMode(ResourceSnapshot(value: true, confirmedVersion: version(2), pendingMutations: 1)))
        ClientState.reduce(&state, .driverMode(ResourceSnapshot(value: false, confirmedVersion: version(2))))
        #expect(state.notice == nil)
        // A passenger's own cancel says nothing either.
        state = Fixture.state(ride: .approaching(accepted))
        ClientState.reduce(&state, .ride(ResourceSnapshot(value: RideStatus.none, confirmedVersion: version(3), pendingMutations: 1)))
        ClientState.reduce(&state, .ride(ResourceSnapshot(value: RideStatus.none, confirmedVersion: version(4))))
        #expect(state.notice == nil)
    }

    @Test("history: the selection stays in view when it goes past the pane")
    func historyScrolls() {
        var state = Fixture.state(ride: RideStatus.none)
        ClientState.reduce(&state, .historyScrolledToEnd)
        ClientState.reduce(&state, .historyLoaded(Fixture.history(20, next: nil), from: "/me/history"))
        // 12 rows: title, 5 lines of screen, a pane of 4 (its title and 3 rows), status, keys.
        let lines = render(state, ViewState(searchFocused: false, historyOpen: true, historySelection: 12), width: 60, height: 12)
        let marked = lines.filter { $0.hasPrefix("> ") }
        #expect(marked.count == 1)
        #expect(marked.first?.contains("rode to Bastille") == true, "row 12 is a ride as passenger")
        #expect(lines.contains { $0.hasPrefix("  ") && $0.contains("  drove Hugo") }, "the row after it shows too")
    }

    @Test("a narrow terminal cuts lines with an ellipsis")
    func narrow() {
        let lines = render(Fixture.state(ride: .pending(Fixture.ride())), width: 24, height: 10)
        #expect(lines[9].hasSuffix("…"))
        #expect(lines.allSatisfy { $0.count == 24 })
    }

    // MARK: Hostile text

    /// Text a hostile or broken server could send: a clear-screen sequence, a window-title
    /// sequence ended by BEL, an 8-bit CSI (C1), DEL, a line break and a tab.
    static let hostile = "eve\u{1B}[2J\u{1B}]2;pwned\u{07}\u{9B}31m\u{7F}\r\n\tend"

    /// The controls (C0, DEL, C1) in `lines`: what a terminal would act on.
    private func controls(in lines: [String]) -> [Unicode.Scalar] {
        lines.joined().unicodeScalars.filter { $0.value < 0x20 || (0x7F...0x9F).contains($0.value) }
    }

    /// Every screen, with the hostile text in each name, place, typed text and message it shows.
    private func hostileStates() -> [ClientState] {
        let place = Place(id: "x", name: "Gare\(Self.hostile)", area: "\u{1B}]2;title\u{07}Paris\u{85}")
        let ride = Ride(id: "r1", passenger: Self.hostile, driver: Self.hostile, destination: place)
        let statuses: [RideStatus] = [.pending(ride), .approaching(ride), .incoming(ride), .riding(ride), .survey(ride)]
        var states = statuses.flatMap { status in
            [Fixture.state(user: Self.hostile, driverMode: true, ride: status), Fixture.state(user: "ann", driverMode: false, ride: status)]
        }
        states.append(Fixture.searching("ga\(Self.hostile)", loaded: [place, Fixture.gareDuNord]))
        states.append(Fixture.searching("zz\(Self.hostile)", loaded: []))
        var failedSearch = Fixture.searching("gare")
        ClientState.reduce(&failedSearch, .searchFailed(query: "gare", Self.hostile))
        states.append(failedSearch)
        var withHistory = Fixture.state(ride: .pending(ride))
        ClientState.reduce(&withHistory, .actionRefused(Self.hostile))
        ClientState.reduce(&withHistory, .historyScrolledToEnd)
        ClientState.reduce(&withHistory, .historyLoaded(HistoryPage(items: [ride, ride], next: "/more"), from: "/me/history"))
        ClientState.reduce(&withHistory, .historyScrolledToEnd)
        ClientState.reduce(&withHistory, .historyFailed(Self.hostile, from: "/more"))
        states.append(withHistory)
        var failing = Fixture.state(ride: .riding(ride))
        failing.ride.health.failure = Self.hostile
        states.append(failing)
        return states
    }

    @Test("hostile names, places and messages: no control character reaches the frame, a placeholder shows where")
    func hostileText() {
        for state in hostileStates() {
            for view in [ViewState(), ViewState(searchFocused: false, historyOpen: true, historySelection: 1)] {
                let lines = frame(state, view).lines
                #expect(controls(in: lines).isEmpty, "\(state.screen): \(controls(in: lines))")
            }
        }
        // The text is kept, each control shown as one replacement character.
        let offered = Ride(id: "r1", passenger: Self.hostile, driver: "bob", destination: Fixture.bastille)
        let text = frame(Fixture.state(user: "bob", driverMode: true, ride: .incoming(offered))).text
        #expect(text.contains("eve\u{FFFD}[2J\u{FFFD}]2;pwned\u{FFFD}\u{FFFD}31m\u{FFFD}\u{FFFD}\u{FFFD}\u{FFFD}end asks for a ride."))
    }

    @Test("hostile login texts: the server's address, a pasted name and the error message are shown safe")
    func hostileLogin() {
        var state = LoginState()
        state.username = Self.hostile
        let forms = [LoginForm(), LoginForm(focus: .password, error: Self.hostile)]
        for form in forms {
            let lines = renderLogin(state, form, isLoading: false, server: "evil\u{1B}[2J", width: 100, height: 20)
            #expect(lines.allSatisfy { $0.count == 100 })
            #expect(controls(in: lines).isEmpty, "\(controls(in: lines))")
        }
        let lines = renderLogin(state, forms[1], isLoading: false, server: "evil\u{1B}[2J", width: 100, height: 20)
        #expect(lines[0].hasSuffix("evil\u{FFFD}[2J "))
        #expect(lines[18].contains("Error: eve\u{FFFD}[2J"))
    }
}
