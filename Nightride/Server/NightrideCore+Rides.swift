import NightrideModel
import StateLoopWire

/// The ride flow. A transition sets the status of both sides at once, so a passenger and their
/// driver never disagree about where the ride is for longer than the pushes take.
extension NightrideCore {
    mutating func apply(_ action: RideAction, for user: String, at now: Duration) throws(Rejection) -> Version {
        guard let record = users[user] else { throw Rejection(.unknownUser, "no user \(user)") }
        let status = record.ride.value
        switch (action, status) {
        case (.request(let asked), .none):
            // The catalog's place, not the client's copy of it: a name or area sent along with
            // a known id is never stored.
            guard let destination = catalog.place(id: asked.id) else {
                throw Rejection(.unknownPlace, "there is no place \(asked.id)")
            }
            let (id, number) = makeRideID()
            let ride = Ride(id: id, passenger: user, destination: destination)
            rides[id] = ActiveRide(number: number, ride: ride, stage: .waiting)
            waiting.append(id)
            setRideStatus(.pending(ride), for: user, at: now)
            dispatch(at: now)

        case (.cancel, .pending(let ride)) where ride.passenger == user,
             (.cancel, .approaching(let ride)) where ride.passenger == user:
            cancel(ride.id, at: now)

        case (.accept, .incoming(let ride)):
            guard var active = rides[ride.id], active.stage == .offered(to: user) else {
                throw invalid(action, status)
            }
            active.ride.driver = user
            active.stage = .approaching
            rides[ride.id] = active
            users[user]?.lastDriverActivity = now
            setRideStatus(.approaching(active.ride), for: active.ride.passenger, at: now)
            setRideStatus(.approaching(active.ride), for: user, at: now)

        case (.arrive, .approaching(let ride)) where ride.driver == user:
            rides[ride.id]?.stage = .riding
            users[user]?.lastDriverActivity = now
            setRideStatus(.riding(ride), for: ride.passenger, at: now)
            setRideStatus(.riding(ride), for: user, at: now)

        case (.finish, .riding(let ride)) where ride.driver == user:
            rides[ride.id]?.stage = .survey
            users[user]?.lastDriverActivity = now
            users[ride.passenger]?.history.append(ride)
            users[user]?.history.append(ride)
            setRideStatus(.survey(ride), for: ride.passenger, at: now)
            setRideStatus(.none, for: user, at: now)
            dispatch(at: now)

        case (.finishSurvey, .survey(let ride)):
            rides[ride.id] = nil
            setRideStatus(.none, for: user, at: now)

        default:
            throw invalid(action, status)
        }
        return users[user]!.ride.version
    }

    /// Offers waiting rides, oldest first, to available drivers, the longest idle first (ties
    /// by name, so the choice is repeatable).
    mutating func dispatch(at now: Duration) {
        while let rideID = waiting.first {
            let candidates = users.lazy.filter { $0.value.isAvailableDriver }
            guard let driver = candidates.min(by: { ($0.value.lastDriverActivity, $0.key) < ($1.value.lastDriverActivity, $1.key) })?.key,
                  var active = rides[rideID] else { return }
            waiting.removeFirst()
            active.stage = .offered(to: driver)
            rides[rideID] = active
            var offered = active.ride
            offered.driver = driver
            setRideStatus(.incoming(offered), for: driver, at: now)
        }
    }

    /// Takes an offer back from its driver and puts the ride back in the queue at its place.
    mutating func withdrawOffer(_ rideID: String, at now: Duration) {
        guard var active = rides[rideID], case .offered(let driver) = active.stage else { return }
        active.stage = .waiting
        rides[rideID] = active
        let position = waiting.firstIndex { (rides[$0]?.number ?? .max) > active.number } ?? waiting.endIndex
        waiting.insert(rideID, at: position)
        setRideStatus(.none, for: driver, at: now)
    }

    /// The passenger gives up: both sides go back to no ride, and a freed driver may get
    /// another waiting ride at once.
    private mutating func cancel(_ rideID: String, at now: Duration) {
        guard let active = rides.removeValue(forKey: rideID) else { return }
        waiting.removeAll { $0 == rideID }
        let driver: String? = switch active.stage {
        case .offered(let driver): driver
        case .approaching, .riding: active.ride.driver
        case .waiting, .survey: nil
        }
        if let driver {
            // Being freed by the server restarts the driver's idle time, so a long approach
            // doesn't end in an immediate switch-off.
            users[driver]?.lastDriverActivity = now
            setRideStatus(.none, for: driver, at: now)
        }
        setRideStatus(.none, for: active.ride.passenger, at: now)
        dispatch(at: now)
    }

    private func invalid(_ action: RideAction, _ status: RideStatus) -> Rejection {
        Rejection(.invalidTransition, "\(action.name.rawValue) is not possible while \(status.phase.rawValue)")
    }
}
