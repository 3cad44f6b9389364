import NightrideModel
import StateLoopServer

/// What Nightride keeps in its store, resource by resource. The two a client follows are served
/// per user; the rest are the server's own.
enum NightrideResources {
    /// Each user's driver mode, by name (`/me/driver-mode`).
    static let driverMode = ServerResource("driver-mode", of: Bool.self)
    /// Each user's ride status, by name (`/me/ride`).
    static let ride = ServerResource("ride", of: RideStatus.self)
    /// Each account, by its case-folded name.
    static let account = ServerResource("account", of: Account.self)
    /// The one dispatch book, under ``dispatchID``.
    static let dispatch = ServerResource("dispatch", of: DispatchBook.self)
    /// Past rides, one row each, under ``historyPrefix(of:)`` and a ten-digit sequence number.
    static let history = ServerResource("history", of: Ride.self)

    static let dispatchID = "all"

    /// The prefix of `user`'s history rows. The name's length comes first, so that no user's
    /// prefix is the start of another's, whatever characters names hold ("ann/" would be the
    /// start of "ann/x/…").
    static func historyPrefix(of user: String) -> String {
        "\(user.utf8.count):\(user)/"
    }

    /// The id of `user`'s history row number `sequence` (from 1, oldest first).
    static func historyID(of user: String, _ sequence: Int) -> String {
        let digits = String(sequence)
        return historyPrefix(of: user) + String(repeating: "0", count: max(0, 10 - digits.count)) + digits
    }

    /// The sequence number of a history row's id.
    static func historySequence(of id: String) -> Int? {
        id.split(separator: "/").last.flatMap { Int($0) }
    }
}
