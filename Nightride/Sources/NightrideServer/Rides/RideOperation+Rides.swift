import Foundation
import NightrideModel

/// The ride flow. A transition sets the status of both sides at once, so a passenger and their
/// driver never disagree about where the ride is for longer than the pushes take.
extension RideOperation {
    /// Applies a ride action of `user`.
    mutating func perform(_ action: RideAction, for user: String) throws {
        guard let status = try world.rideStatus(of: user) else { throw RideRefusal(.unknownUser, "no user \(user)") }
        switch (action, status) {
        case (.request(let asked), .none):
            // The catalog's place, not the client's copy of it: a name or area sent along with
            // a known id is never stored.
            guard let destination = rules.catalog.place(id: asked.id) else {
                throw RideRefusal(.unknownPlace, "there is no place \(asked.id)")
            }
            let number = book.nextRideNumber
            book.nextRideNumber += 1
            let ride = Ride(id: "r\(number)", passenger: user, destination: destination)
            book.rides[ride.id] = ActiveRide(number: number, ride: ride, stage: .waiting)
            book.waiting.append(ride.id)
            try world.setRideStatus(.pending(ride), for: user)
            try dispatch()

        case (.cancel, .pending(let ride)) where ride.passenger == user,
            (.cancel, .approaching(let ride)) where ride.passenger == user:
            try cancel(ride.id)

        case (.accept, .incoming(let ride)):
            guard var active = book.rides[ride.id], active.stage == .offered(to: user) else {
                throw invalid(action, status)
            }
            active.ride.driver = user
            active.stage = .approaching
            book.rides[ride.id] = active
            markActive(user)
            try world.setRideStatus(.approaching(active.ride), for: active.ride.passenger)
            try world.setRideStatus(.approaching(active.ride), for: user)

        case (.arrive, .approaching(let ride)) where ride.driver == user:
            book.rides[ride.id]?.stage = .riding
            markActive(user)
            try world.setRideStatus(.riding(ride), for: ride.passenger)
            try world.setRideStatus(.riding(ride), for: user)

        case (.finish, .riding(let ride)) where ride.driver == user:
            book.rides[ride.id]?.stage = .survey
            markActive(user)
            // Dated to the second, as the wire says it.
            var ended = ride
            ended.endedAt = Date(timeIntervalSince1970: Double(now / .seconds(1)).rounded(.down))
            try world.appendHistory(ended, for: ride.passenger)
            try world.appendHistory(ended, for: user)
            try world.setRideStatus(.survey(ride), for: ride.passenger)
            try world.setRideStatus(.none, for: user)
            try dispatch()

        case (.finishSurvey, .survey(let ride)):
            book.rides[ride.id] = nil
            try world.setRideStatus(.none, for: user)

        case (.rate(let stars), .survey(let ride)):
            guard RideAction.stars.contains(stars) else {
                throw RideRefusal(.invalidRating, "a ride is rated 1 to 5 stars, not \(stars)")
            }
            book.rides[ride.id] = nil
            try world.rateNewestRide(ride.id, stars: stars, for: user)
            try world.setRideStatus(.none, for: user)

        default:
            throw invalid(action, status)
        }
    }

    /// Offers waiting rides, oldest first, to available drivers, the longest idle first (ties
    /// by name, so the choice is repeatable).
    mutating func dispatch() throws {
        // Most operations find no ride waiting; working out the drivers would cost a pass over
        // every one of them (a server-side switch of 1,000 drivers dispatches 1,000 times).
        guard !book.waiting.isEmpty else { return }
        // Worked out once: an offer takes its driver out, and nothing else changes meanwhile.
        var available = book.availableDrivers
        while let rideID = book.waiting.first {
            guard let driver = available.min(by: { ($0.value, $0.key) < ($1.value, $1.key) })?.key,
                var active = book.rides[rideID]
            else { return }
            available[driver] = nil
            book.waiting.removeFirst()
            active.stage = .offered(to: driver)
            book.rides[rideID] = active
            var offered = active.ride
            offered.driver = driver
            try world.setRideStatus(.incoming(offered), for: driver)
        }
    }

    /// Takes an offer back from its driver and puts the ride back in the queue at its place.
    mutating func withdrawOffer(_ rideID: String) throws {
        guard var active = book.rides[rideID], case .offered(let driver) = active.stage else { return }
        active.stage = .waiting
        book.rides[rideID] = active
        let position = book.waiting.firstIndex { (book.rides[$0]?.number ?? .max) > active.number } ?? book.waiting.endIndex
        book.waiting.insert(rideID, at: position)
        try world.setRideStatus(.none, for: driver)
    }

    /// The passenger gives up: both sides go back to no ride, and a freed driver may get
    /// another waiting ride at once.
    private mutating func cancel(_ rideID: String) throws {
        guard let active = book.rides.removeValue(forKey: rideID) else { return }
        book.waiting.removeAll { $0 == rideID }
        let driver: String? =
            switch active.stage {
            case .offered(let driver): driver
            case .approaching, .riding: active.ride.driver
            case .waiting, .survey: nil
            }
        if let driver {
            // Being freed by the server restarts the driver's idle time, so a long approach
            // doesn't end in an immediate switch-off.
            markActive(driver)
            try world.setRideStatus(.none, for: driver)
        }
        try world.setRideStatus(.none, for: active.ride.passenger)
        try dispatch()
    }

    private func invalid(_ action: RideAction, _ status: RideStatus) -> RideRefusal {
        RideRefusal(.invalidTransition, "\(action.name.rawValue) is not possible while \(status.phase.rawValue)")
    }
}
