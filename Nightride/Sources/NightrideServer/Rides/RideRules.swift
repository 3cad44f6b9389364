/// The settings the ride rules follow, the same for every operation of a server.
struct RideRules: Sendable {
    /// How long a waiting driver may go without a driver action before driver mode switches off;
    /// `nil` never switches it off.
    var inactivityTimeout: Duration?
    /// The destinations a ride can be requested to.
    var catalog: PlaceCatalog
}
