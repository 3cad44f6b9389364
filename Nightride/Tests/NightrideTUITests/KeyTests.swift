import NightrideClient
import NightrideModel
import NightrideTUI
import Testing

@Suite("Terminal UI: keys")
struct KeyTests {
    // MARK: Decoding

    @Test("bytes to keys: letters, controls, arrows in both modes, Escape alone, UTF-8")
    func decoding() {
        #expect(KeyDecoder.decode(Array("ab".utf8)) == [.character("a"), .character("b")])
        #expect(KeyDecoder.decode([0x03, 0x0D, 0x7F, 0x08, 0x09]) == [.control("c"), .enter, .backspace, .backspace, .tab])
        #expect(KeyDecoder.decode([0x1B, 0x5B, 0x41, 0x1B, 0x4F, 0x42]) == [.up, .down])
        #expect(KeyDecoder.decode([0x1B, 0x5B, 0x43, 0x1B, 0x5B, 0x44, 0x1B, 0x5B, 0x5A]) == [.right, .left, .backTab])
        #expect(KeyDecoder.decode([0x1B]) == [.escape])
        #expect(KeyDecoder.decode(Array("é".utf8) + [0x61]) == [.character("é"), .character("a")])
        // An unknown sequence (F5: ESC [ 1 5 ~) is dropped, not typed.
        #expect(KeyDecoder.decode([0x1B, 0x5B, 0x31, 0x35, 0x7E, 0x61]) == [.character("a")])
    }

    // MARK: The search box

    @Test("letters typed in the focused box edit the destination; Backspace and Ctrl-U too")
    func typing() {
        let state = Fixture.searching("gar")
        #expect(KeyMap.handle(.character("e"), state: state, view: ViewState()).commands == [.perform(.typeDestination("gare"))])
        // Command letters are text here.
        #expect(KeyMap.handle(.character("q"), state: state, view: ViewState()).commands == [.perform(.typeDestination("garq"))])
        #expect(KeyMap.handle(.backspace, state: state, view: ViewState()).commands == [.perform(.typeDestination("ga"))])
        #expect(KeyMap.handle(.control("u"), state: state, view: ViewState()).commands == [.perform(.typeDestination(""))])
        #expect(KeyMap.handle(.backspace, state: Fixture.searching(""), view: ViewState()).commands == [])
    }

    @Test("arrows move the selection within the results; Enter requests the selected place and empties the box")
    func picking() {
        let state = Fixture.searching("gare", loaded: [Fixture.gareDuNord, Fixture.gareDeLEst])
        var view = ViewState()
        view = KeyMap.handle(.down, state: state, view: view).view
        #expect(view.resultSelection == 1)
        view = KeyMap.handle(.down, state: state, view: view).view
        #expect(view.resultSelection == 1, "stops on the last result")
        #expect(
            KeyMap.handle(.enter, state: state, view: view).commands == [
                .perform(.requestRide(to: Fixture.gareDeLEst)), .perform(.typeDestination("")),
            ])
        view = KeyMap.handle(.up, state: state, view: view).view
        view = KeyMap.handle(.up, state: state, view: view).view
        #expect(view.resultSelection == 0)
        #expect(KeyMap.handle(.enter, state: Fixture.searching("gare"), view: ViewState()).commands == [], "nothing to pick yet")
    }

    @Test("Tab leaves the box for the commands and comes back; Ctrl-C quits from the box")
    func focus() {
        let state = Fixture.searching("gare")
        let out = KeyMap.handle(.tab, state: state, view: ViewState()).view
        #expect(out.focus(on: state.screen) == .commands)
        #expect(KeyMap.handle(.character("d"), state: state, view: out).commands == [.perform(.toggleDriverMode)])
        #expect(KeyMap.handle(.character("q"), state: state, view: out).commands == [.quit])
        #expect(KeyMap.handle(.tab, state: state, view: out).view.focus(on: state.screen) == .search)
        #expect(KeyMap.handle(.escape, state: state, view: ViewState()).view.searchFocused == false)
        #expect(KeyMap.handle(.control("c"), state: state, view: ViewState()).commands == [.quit])
    }

    @Test("coming back to Where to? from a ride leaves the keys with the commands: the next letter is a command, not typed")
    func backToWhereTo() {
        // A request made from the box, then cancelled with c: h must open the history.
        var view = ViewState(searchFocused: true, resultSelection: 3)
        view.screenChanged(from: .passengerWaiting, to: .passengerRequesting)
        #expect(view == ViewState(searchFocused: false, resultSelection: 0))
        let whereTo = Fixture.state(ride: RideStatus.none)
        #expect(view.focus(on: whereTo.screen) == .commands)
        #expect(KeyMap.handle(.character("h"), state: whereTo, view: view).view.historyOpen)
        #expect(KeyMap.handle(.tab, state: whereTo, view: view).view.focus(on: whereTo.screen) == .search, "Tab hands the keys to the box")
        for old in [Screen.survey, .passengerDriverComing, .driverWaiting, .riding] {
            var after = ViewState()
            after.screenChanged(from: old, to: .passengerRequesting)
            #expect(!after.searchFocused, "from \(old)")
        }
        // The first screen after connecting is like a launch: the box has the keys.
        var launched = ViewState()
        launched.screenChanged(from: .connecting, to: .passengerRequesting)
        #expect(launched.searchFocused)
    }

    // MARK: Commands

    @Test("ride keys act only on the screens that show them")
    func rideKeys() {
        let waiting = Fixture.state(ride: .pending(Fixture.ride(driver: nil)))
        let coming = Fixture.state(ride: .approaching(Fixture.ride()))
        let offered = Fixture.state(user: "bob", driverMode: true, ride: .incoming(Fixture.ride()))
        let driving = Fixture.state(user: "bob", driverMode: true, ride: .approaching(Fixture.ride()))
        let ridingDriver = Fixture.state(user: "bob", driverMode: true, ride: .riding(Fixture.ride()))
        let ridingPassenger = Fixture.state(ride: .riding(Fixture.ride()))
        let survey = Fixture.state(ride: .survey(Fixture.ride()))
        func commands(_ letter: Character, _ state: ClientState) -> [UICommand] {
            KeyMap.handle(.character(letter), state: state, view: ViewState()).commands
        }
        #expect(commands("c", waiting) == [.perform(.cancelRide)])
        #expect(commands("c", coming) == [.perform(.cancelRide)])
        #expect(commands("c", offered) == [])
        #expect(commands("a", offered) == [.perform(.acceptRide)])
        #expect(commands("a", waiting) == [])
        #expect(commands("v", driving) == [.perform(.arrive)])
        #expect(commands("v", coming) == [])
        #expect(commands("f", ridingDriver) == [.perform(.finishRide)])
        #expect(commands("f", ridingPassenger) == [])
        #expect(commands("s", survey) == [.perform(.finishSurvey)])
        #expect(commands("4", survey) == [.perform(.rateRide(stars: 4))])
        #expect(commands("1", survey) == [.perform(.rateRide(stars: 1))])
        #expect(commands("6", survey) == [] && commands("4", waiting) == [])
        #expect(commands("s", waiting) == [])
        // Driver mode cannot go on while riding as a passenger (the server refuses it too).
        #expect(commands("d", waiting) == [])
        #expect(commands("d", coming) == [])
        #expect(commands("d", ridingPassenger) == [])
        #expect(commands("d", survey) == [.perform(.toggleDriverMode)], "the ride is over")
        let whereTo = KeyMap.handle(.character("d"), state: Fixture.state(ride: RideStatus.none), view: ViewState(searchFocused: false))
        #expect(whereTo.commands == [.perform(.toggleDriverMode)])
        #expect(commands("d", offered) == [.perform(.toggleDriverMode)], "declines the offer")
        #expect(commands("d", ridingDriver) == [.perform(.toggleDriverMode)], "the server says why not")
        #expect(commands("r", survey) == [.perform(.refresh)])
        #expect(commands("q", offered) == [.quit])
    }

    @Test("x and Escape dismiss a refusal")
    func dismiss() {
        var state = Fixture.state(ride: .pending(Fixture.ride()))
        #expect(KeyMap.handle(.character("x"), state: state, view: ViewState()).commands == [])
        ClientState.reduce(&state, .actionRefused("cancel: no"))
        #expect(KeyMap.handle(.character("x"), state: state, view: ViewState()).commands == [.perform(.dismissError)])
        #expect(KeyMap.handle(.escape, state: state, view: ViewState()).commands == [.perform(.dismissError)])
    }

    // MARK: History

    @Test("h opens the history and loads its first page again; h closes it")
    func historyToggle() {
        let state = Fixture.state(ride: .pending(Fixture.ride()))
        let (open, commands) = KeyMap.handle(.character("h"), state: state, view: ViewState())
        #expect(open.historyOpen)
        #expect(commands == [.perform(.openHistory)], "the first page again, with the rides ended since")
        #expect(KeyMap.handle(.character("h"), state: state, view: open).view.historyOpen == false)
        #expect(KeyMap.handle(.escape, state: state, view: open).view.historyOpen == false)
    }

    @Test("the next page is asked for when the selection reaches the last row, once")
    func historyPaging() {
        var state = Fixture.state(ride: .pending(Fixture.ride()))
        ClientState.reduce(&state, .historyScrolledToEnd)
        ClientState.reduce(&state, .historyLoaded(Fixture.history(3, next: "/me/history?cursor=3"), from: "/me/history"))
        var view = ViewState(historyOpen: true)
        var result = KeyMap.handle(.down, state: state, view: view)
        #expect(result.view.historySelection == 1)
        #expect(result.commands == [])
        view = result.view
        result = KeyMap.handle(.down, state: state, view: view)
        #expect(result.view.historySelection == 2)
        #expect(result.commands == [.perform(.scrollHistory)])

        ClientState.reduce(&state, .historyScrolledToEnd)
        #expect(KeyMap.handle(.down, state: state, view: result.view).commands == [], "already loading")
        ClientState.reduce(&state, .historyLoaded(Fixture.history(2, next: nil), from: "/me/history?cursor=3"))
        view = ViewState(historyOpen: true, historySelection: 4)
        #expect(KeyMap.handle(.down, state: state, view: view).commands == [], "no more pages")
        #expect(KeyMap.handle(.up, state: state, view: view).view.historySelection == 3)
    }

    @Test("with the history open, command letters still work")
    func historyCommands() {
        let state = Fixture.state(ride: .pending(Fixture.ride()))
        #expect(KeyMap.handle(.character("c"), state: state, view: ViewState(historyOpen: true)).commands == [.perform(.cancelRide)])
        #expect(KeyMap.handle(.character("q"), state: state, view: ViewState(historyOpen: true)).commands == [.quit])
    }
}
