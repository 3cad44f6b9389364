import NightrideModel
import StateLoopWire

/// What the core keeps per user.
struct UserRecord: Sendable {
    var driverMode: Versioned<Bool>
    var ride: Versioned<RideStatus>
    /// The last driver action, or the end of the last ride driven: the start of the idle time
    /// that switches driver mode off.
    var lastDriverActivity: Duration
    /// Past rides, oldest first.
    var history: [Ride]
    /// The bcrypt hash of the user's password; `nil` until a login gives one.
    var passwordHash: String?
    /// Answers to mutations by client mutation id, and the ids in the order they came, to forget
    /// the oldest first.
    var answers: [String: Result<Version, Rejection>] = [:]
    /// Per client (the `<client>` of `<client>:<sequence>` mutation ids), the newest sequence
    /// number processed, applied or rejected: the `lastMutationID` that values tell that client.
    var lastMutationIDs: [String: UInt64] = [:]
    private var answerOrder: [String] = []

    init(driverMode: Versioned<Bool>, ride: Versioned<RideStatus>, lastDriverActivity: Duration, history: [Ride], passwordHash: String?) {
        self.driverMode = driverMode
        self.ride = ride
        self.lastDriverActivity = lastDriverActivity
        self.history = history
        self.passwordHash = passwordHash
    }

    /// In driver mode with no ride, or being offered one: the states inactivity can end.
    var isIdleDriver: Bool {
        guard driverMode.value else { return false }
        switch ride.value {
        case .none, .incoming: return true
        default: return false
        }
    }

    /// In driver mode and free to be offered a ride.
    var isAvailableDriver: Bool {
        driverMode.value && ride.value == .none
    }

    mutating func remember(_ answer: Result<Version, Rejection>, for mutationID: String, limit: Int) {
        answers[mutationID] = answer
        if let (client, sequence) = MutationID(rawValue: mutationID).parts {
            lastMutationIDs[client.rawValue] = max(lastMutationIDs[client.rawValue] ?? 0, sequence)
        }
        answerOrder.append(mutationID)
        if answerOrder.count > limit {
            answers[answerOrder.removeFirst()] = nil
        }
    }
}
