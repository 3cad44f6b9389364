import Foundation
import NightrideHarness
import NightrideModel
import StateLoopServer
import StateLoopWire

@testable import NightrideHarness
@testable import NightrideServer

/// The oracle of the rules' tests: the Nightride domain in memory (users, their versioned driver
/// mode and ride status, the rides between them, their sessions, the answers to their
/// mutations, and the log of every change), against which the store-backed server is checked.
///
/// The rules themselves are ``RideOperation``'s, run here on a ``MemoryWorld``; the core adds
/// what a server keeps beside them. It is a value with no I/O and no clock: every operation that
/// can change something takes `now`, the time since the server started, so tests drive it with
/// explicit times. Each operation that changes a user's resource raises that resource's counter
/// by one (from 1 when the user is created), however many steps of the operation touched it; the
/// epoch is fixed for the core's life.
///
/// Every operation taking `now` first applies the inactivity switch-offs due by then (see
/// ``RideOperation``), so the state never depends on how often a timer calls
/// ``expireInactiveDrivers(at:)``.
///
/// Test code: the server runs the same rules on its store (`StoreWorld`); this copy lets the
/// rules' tests drive them with explicit times and no I/O, and `StoreWorldTests` checks that
/// both give the same answers, values and versions.
struct RulesOracle: Sendable {
    /// The epoch of every version this core hands out.
    let epoch: UInt64
    /// How long a waiting driver may go without a driver action before driver mode switches off;
    /// `nil` never switches it off.
    var inactivityTimeout: Duration?
    /// The destinations a ride can be requested to, and that fake histories use.
    let catalog: PlaceCatalog
    /// Every change so far.
    private(set) var changeLog = ChangeLog()
    /// How long a login's token is accepted; `nil` for ever.
    var tokenLifetime: Duration?

    /// The users' values, accounts, rides and histories.
    private(set) var world: MemoryWorld
    /// Who each token was issued to, and until when (`nil`: for good).
    private var tokens: [String: IssuedToken] = [:]
    /// Per user, the answers to their mutations.
    private var memories: [String: MutationMemory] = [:]
    /// The latest time seen, so that a caller's slightly earlier `now` can't make the log go back.
    private var clock: Duration = .zero

    /// How many mutation answers are remembered per user for idempotence.
    static let rememberedMutations = 1_000

    /// An empty world.
    init(
        epoch: UInt64 = 1,
        inactivityTimeout: Duration? = .seconds(300),
        tokenLifetime: Duration? = nil,
        catalog: PlaceCatalog = PlaceCatalog()
    ) {
        self.epoch = epoch
        self.inactivityTimeout = inactivityTimeout
        self.tokenLifetime = tokenLifetime
        self.catalog = catalog
        world = MemoryWorld(epoch: epoch)
    }

    // MARK: Users

    /// Logs `name` in with `token`, creating the user (driver mode off, no ride, a fake history)
    /// on first sight. A user may hold several tokens, one per login.
    ///
    /// Names are one account whatever their case: "Ann" signs in to "ann", whose spelling (the
    /// first one seen) is the one the response and every value use. `proof` says what the
    /// server established about the password (see ``PasswordProof``): an account is created
    /// only with `.sets` (no account without a password), and signed in to only with
    /// `.matches` of its stored hash.
    ///
    /// - Throws: `invalidName` for an empty or overlong name; `passwordRequired` for a new name
    ///   without a password; `wrongPassword` when the proof does not fit the stored password
    ///   (missing, wrong, or set by a concurrent login meanwhile).
    mutating func login(name: String, token: String, proof: PasswordProof, at now: Duration) throws(RideRefusal) -> LoginResponse {
        let now = advance(to: now)
        let normalized = try AccountName.checkedLogin(name)
        let places = catalog.places
        let user = try operate(at: now) { operation in
            try operation.world.signIn(name: normalized, proof: proof) { SampleHistory.rides(for: $0, places: places) }
        }
        tokens[token] = IssuedToken(user: user, expiry: tokenLifetime.map { now + $0 })
        return LoginResponse(token: token, user: user)
    }

    /// The stored password hash of the account `name` names (as a login would spell it, in any
    /// case), `nil` for no such account.
    func passwordHash(of name: String) -> String? {
        world.account(AccountName.key(ofLogin: name))?.passwordHash
    }

    /// The mutation ids whose answers are remembered for `user`, for tests and diagnostics.
    func rememberedMutationIDs(of user: String) -> [String] {
        memories[user].map { Array($0.answers.keys) } ?? []
    }

    /// The user a token was issued to, while it is valid at `now` (`nil` checks no expiry).
    func user(forToken token: String, at now: Duration? = nil) -> String? {
        guard let issued = tokens[token] else { return nil }
        if let now, let expiry = issued.expiry, now >= expiry { return nil }
        return issued.user
    }

    /// Every user's name, sorted.
    var userNames: [String] {
        world.values.keys.sorted()
    }

    /// The user's driver mode now.
    func driverMode(of user: String) -> Versioned<Bool>? {
        world.values[user]?.driverMode
    }

    /// The user's ride status now.
    func rideStatus(of user: String) -> Versioned<RideStatus>? {
        world.values[user]?.ride
    }

    /// Both of the user's resources now.
    func snapshot(of user: String) -> UserSnapshot? {
        world.values[user]
    }

    /// One page of the user's past rides, newest first.
    ///
    /// The cursor counts rides from the oldest, so pages stay put when a newly finished ride is
    /// added on top; `next` is the path of the following page, `nil` on the last one.
    func history(of user: String, cursor: String? = nil, pageSize: Int = 10) throws(RideRefusal) -> HistoryPage {
        guard let history = world.histories[user] else { throw RideRefusal(.unknownUser, "no user \(user)") }
        var end = history.count
        if let cursor {
            guard let position = Int(cursor), (0...history.count).contains(position) else {
                throw RideRefusal(.invalidCursor, "unknown history cursor \(cursor)")
            }
            end = position
        }
        let start = max(0, end - max(1, pageSize))
        return HistoryPage(
            items: history[start..<end].reversed(),
            next: start > 0 ? "/me/history?cursor=\(start)" : nil
        )
    }

    // MARK: Mutations

    /// Switches the user's driver mode; returns its version afterwards. See
    /// ``RideOperation/setDriverMode(_:for:)`` for the rules. A repeated `mutationID` gets the
    /// first answer without applying again.
    mutating func setDriverMode(
        _ on: Bool, for user: String, mutationID: String? = nil, at now: Duration
    ) throws(RideRefusal) -> Version {
        let now = advance(to: now)
        return try remembering(mutationID, for: user, change: "driver-mode \(on)") { core throws(RideRefusal) in
            try core.operate(at: now) { try $0.setDriverMode(on, for: user) }
            return core.world.values[user]!.driverMode.version
        }.get()
    }

    /// Applies a ride action for the user; returns the version of the user's ride status
    /// afterwards. A repeated `mutationID` gets the first answer without applying again.
    mutating func perform(
        _ action: RideAction, for user: String, mutationID: String? = nil, at now: Duration
    ) throws(RideRefusal) -> Version {
        let now = advance(to: now)
        return try remembering(mutationID, for: user, change: "ride \(action)") { core throws(RideRefusal) in
            try core.operate(at: now) { try $0.perform(action, for: user) }
            return core.world.values[user]!.ride.version
        }.get()
    }

    /// Switches off the driver mode of every driver inactive for `inactivityTimeout` by `now`,
    /// withdrawing the offers they were ignoring. The server's timer calls this; every other
    /// operation does it first too.
    mutating func expireInactiveDrivers(at now: Duration) {
        _ = advance(to: now)
    }

    /// When the next inactivity switch-off is due, if any driver is waiting.
    var nextInactivityDeadline: Duration? {
        world.book.nextInactivityDeadline(timeout: inactivityTimeout)
    }

    // MARK: Internals

    /// Moves the core's time forward to `now` (never back) and applies the switch-offs due.
    private mutating func advance(to now: Duration) -> Duration {
        clock = max(clock, now)
        guard let deadline = nextInactivityDeadline, deadline <= clock else { return clock }
        // Switch-offs refuse nothing.
        try? operate(at: clock) { try $0.expireInactiveDrivers() }
        return clock
    }

    /// Runs one operation of the rules at `now` and commits it: its changes become versions and
    /// change records. An operation that throws changes nothing.
    private mutating func operate<Result>(
        at now: Duration, _ body: (inout RideOperation<MemoryWorld>) throws -> Result
    ) throws(RideRefusal) -> Result {
        let (changed, result) = try Self.run(body, on: world, at: now, rules: RideRules(inactivityTimeout: inactivityTimeout, catalog: catalog))
        // The operation is over and its copy released: the commit writes the dictionaries in place.
        world = changed
        for record in world.commit(at: now) {
            changeLog.append(record)
        }
        return result
    }

    private static func run<Result>(
        _ body: (inout RideOperation<MemoryWorld>) throws -> Result, on world: MemoryWorld, at now: Duration, rules: RideRules
    ) throws(RideRefusal) -> (MemoryWorld, Result) {
        do {
            var operation = try RideOperation(on: world, at: now, rules: rules)
            let result = try body(&operation)
            return (try operation.finish(), result)
        } catch let refusal as RideRefusal {
            throw refusal
        } catch {
            preconditionFailure("an operation in memory cannot fail but by a refusal: \(error)")
        }
    }

    /// Runs `body` unless `mutationID` was seen for `user`, in which case the first answer is
    /// returned; refusals are remembered too, so a retry can't turn a refusal into a change.
    /// `change` says what the mutation does (route and body): an id seen with another change is
    /// refused (`mutationIDReused`), since the first answer is not an answer to it.
    private mutating func remembering(
        _ mutationID: String?, for user: String, change: String,
        _ body: (inout RulesOracle) throws(RideRefusal) -> Version
    ) -> Result<Version, RideRefusal> {
        guard world.values[user] != nil else { return .failure(RideRefusal(.unknownUser, "no user \(user)")) }
        if let mutationID, let remembered = memories[user]?.answers[mutationID] {
            guard remembered.change == change else {
                return .failure(RideRefusal(.mutationIDReused, "Mutation-ID \(mutationID) was used for another change"))
            }
            return remembered.answer
        }
        let answer: Result<Version, RideRefusal>
        do throws(RideRefusal) {
            answer = .success(try body(&self))
        } catch {
            answer = .failure(error)
        }
        if let mutationID {
            memories[user, default: MutationMemory()].remember(answer, to: change, for: mutationID, limit: Self.rememberedMutations)
        }
        return answer
    }
}

/// A login's token: whose, and until when.
private struct IssuedToken: Sendable {
    let user: String
    let expiry: Duration?
}
