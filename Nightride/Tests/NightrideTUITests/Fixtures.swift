import NightrideClient
import NightrideModel

/// Client states for each screen, built from the public state and its reducer.
enum Fixture {
    static let gareDuNord = Place(id: "gare-du-nord", name: "Gare du Nord", area: "Paris 10e")
    static let gareDeLEst = Place(id: "gare-de-l-est", name: "Gare de l'Est", area: "Paris 10e")
    static let gareDeLyon = Place(id: "gare-de-lyon", name: "Gare de Lyon", area: "Paris 12e")
    static let bastille = Place(id: "bastille", name: "Bastille", area: "Paris 11e")

    /// `user` with the given driver mode and ride status; `nil` for values not known yet.
    static func state(user: String = "ann", driverMode: Bool? = false, ride: RideStatus?) -> ClientState {
        var state = ClientState(user: user)
        state.driverMode.value = driverMode
        state.ride.value = ride
        return state
    }

    /// Ann on "Where to?", having typed `text`, with `places` loaded for it (if any).
    static func searching(_ text: String, loaded places: [Place]? = nil) -> ClientState {
        var state = state(ride: RideStatus.none)
        ClientState.reduce(&state, .searchTyped(text))
        if let places {
            ClientState.reduce(&state, .searchLoaded(query: text, places))
        }
        return state
    }

    /// A ride of ann's (as passenger) driven by bob, to `place`.
    static func ride(to place: Place = gareDuNord, driver: String? = "bob") -> Ride {
        Ride(id: "r1", passenger: "ann", driver: driver, destination: place)
    }

    /// `count` past rides, alternately as passenger and as driver.
    static func history(_ count: Int, next: String?) -> HistoryPage {
        HistoryPage(
            items: (0..<count).map { index in
                index.isMultiple(of: 2)
                    ? Ride(id: "h\(index)", passenger: "ann", driver: "Léa", destination: bastille)
                    : Ride(id: "h\(index)", passenger: "Hugo", driver: "ann", destination: gareDeLyon)
            },
            next: next
        )
    }
}
