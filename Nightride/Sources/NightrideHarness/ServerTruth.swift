import NightrideModel
import NightrideServer
import StateLoopWire

/// What a Nightride server holds now, as its store's change feed has it: every user's two values
/// with their versions, the catalog, and the audit of processed mutations. For demos and tests
/// to compare with what clients show.
public struct ServerTruth: Sendable {
    /// Every change so far, this life's and earlier ones'.
    public let changeLog: ChangeLog
    /// The destinations rides go to.
    public let catalog: PlaceCatalog
    /// Which mutations were applied, and how far each client's were processed.
    public let audit: MutationAudit

    /// Both of the user's values now; `nil` for no such user.
    public func snapshot(of user: String) -> UserSnapshot? {
        changeLog.latest(of: user)
    }

    /// The user's driver mode now.
    public func driverMode(of user: String) -> Versioned<Bool>? {
        snapshot(of: user)?.driverMode
    }

    /// The user's ride status now.
    public func rideStatus(of user: String) -> Versioned<RideStatus>? {
        snapshot(of: user)?.ride
    }

    /// Every user's name, sorted.
    public var userNames: [String] {
        changeLog.userNames
    }
}
