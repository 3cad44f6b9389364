import NightrideModel
import StateLoopServer
import StateLoopSync

@testable import NightrideServer

/// Shared values for the core tests: a world with a passenger and drivers logged in at time 0.
enum Fixture {
    static let epoch: UInt64 = 7
    static let bastille = Place(id: "bastille", name: "Bastille", area: "Paris 11e")

    static func version(_ counter: UInt64) -> Version {
        Version(epoch: epoch, counter: counter)
    }

    /// `ann` (passenger) and the given drivers, logged in at 0; drivers switch on at 0 in order.
    static func world(drivers: [String] = ["bob"], timeout: Duration? = .seconds(60)) throws -> RulesOracle {
        var core = RulesOracle(epoch: epoch, inactivityTimeout: timeout)
        _ = try core.join("ann", token: "t-ann", at: .zero)
        for driver in drivers {
            _ = try core.join(driver, token: "t-\(driver)", at: .zero)
            _ = try core.setDriverMode(true, for: driver, at: .zero)
        }
        return core
    }
}

extension RulesOracle {
    /// Signs `name` up (with the password hash `hash-of-<name>`) or, once it has an account,
    /// in with that hash.
    @discardableResult
    mutating func join(_ name: String, token: String, at now: Duration) throws(RideRefusal) -> LoginResponse {
        let proof: PasswordProof = passwordHash(of: name).map { .matches(hash: $0) } ?? .sets(hash: "hash-of-\(name)")
        return try login(name: name, token: token, proof: proof, at: now)
    }

    func ride(_ user: String) -> RideStatus? { rideStatus(of: user)?.value }
    func mode(_ user: String) -> Bool? { driverMode(of: user)?.value }
}

/// What the tests read of a server's accounts and sessions, beside what its routes answer.
extension NightrideServer {
    /// The live sessions of the account `name` means (in any case), oldest first: at most the
    /// configuration's `sessionsPerUser`.
    func liveSessions(of name: String) async throws -> [Sessions.LiveSession] {
        let life = try await openData()
        return try await life.sync.read { [sessions = life.sessions] in try sessions.live(of: name, in: $0) }
    }

    /// The stored password hash of the account `name` means (in any case); `nil` for none.
    func passwordHash(of name: String) async throws -> String? {
        try await account(AccountName.key(ofLogin: name))?.passwordHash
    }
}
