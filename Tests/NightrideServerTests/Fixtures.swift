import NightrideModel
@testable import NightrideServer
import StateLoopSync

/// Shared values for the core tests: a world with a passenger and drivers logged in at time 0.
enum Fixture {
    static let epoch: UInt64 = 7
    static let bastille = Place(id: "bastille", name: "Bastille", area: "Paris 11e")

    static func version(_ counter: UInt64) -> Version {
        Version(epoch: epoch, counter: counter)
    }

    /// `ann` (passenger) and the given drivers, logged in at 0; drivers switch on at 0 in order.
    static func world(drivers: [String] = ["bob"], timeout: Duration? = .seconds(60)) throws -> NightrideCore {
        var core = NightrideCore(epoch: epoch, inactivityTimeout: timeout)
        _ = try core.login(name: "ann", token: "t-ann", at: .zero)
        for driver in drivers {
            _ = try core.login(name: driver, token: "t-\(driver)", at: .zero)
            _ = try core.setDriverMode(true, for: driver, at: .zero)
        }
        return core
    }
}

extension NightrideCore {
    func ride(_ user: String) -> RideStatus? { rideStatus(of: user)?.value }
    func mode(_ user: String) -> Bool? { driverMode(of: user)?.value }
}
