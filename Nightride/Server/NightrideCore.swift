import Foundation
import NightrideModel
import StateLoopWire

/// The Nightride domain: users, their versioned driver mode and ride status, the rides between
/// them, and the log of every change.
///
/// The core is a value with no I/O and no clock: every operation that can change something takes
/// `now`, the time since the server started, so tests drive it with explicit times. Each change of
/// a user's resource increments that resource's counter (starting at 1 when the user is created);
/// the epoch is fixed for the core's life.
///
/// Driver mode switches itself off once a driver has gone `inactivityTimeout` without a driver
/// action (switching driver mode on, accepting, arriving, finishing) while waiting for or being
/// offered a ride. Every operation taking `now` first applies the switch-offs due by then, so the
/// state never depends on how often a timer calls ``expireInactiveDrivers(at:)``.
public struct NightrideCore: Sendable {
    /// The epoch of every version this core hands out.
    public let epoch: UInt64
    /// How long a waiting driver may go without a driver action before driver mode switches off;
    /// `nil` never switches it off.
    public var inactivityTimeout: Duration?
    /// The destinations a ride can be requested to, and that fake histories use.
    public let catalog: PlaceCatalog
    /// Every change so far.
    public private(set) var changeLog = ChangeLog()
    /// Every mutation processed, in order; kept across restarts, like the change log, for audits.
    public private(set) var processedMutations: [ProcessedMutation] = []

    var users: [String: UserRecord] = [:]
    /// Each account's name by its case-folded form: the spelling it was created with.
    private var accountNames: [String: String] = [:]
    /// Who each token was issued to, and until when (`nil`: for good).
    private var tokens: [String: IssuedToken] = [:]
    /// How long a login's token is accepted; `nil` for ever.
    public var tokenLifetime: Duration?
    var rides: [String: ActiveRide] = [:]
    /// Rides waiting for a driver, oldest request first.
    var waiting: [String] = []
    private var nextRideNumber = 1
    /// The latest time seen, so that a caller's slightly earlier `now` can't make the log go back.
    var clock: Duration = .zero

    /// How many mutation answers are remembered per user for idempotence.
    static let rememberedMutations = 1_000

    /// An empty world.
    public init(
        epoch: UInt64 = 1,
        inactivityTimeout: Duration? = .seconds(300),
        tokenLifetime: Duration? = nil,
        catalog: PlaceCatalog = PlaceCatalog()
    ) {
        self.epoch = epoch
        self.inactivityTimeout = inactivityTimeout
        self.tokenLifetime = tokenLifetime
        self.catalog = catalog
    }

    /// The empty world of a server restarted with its data lost: a new `epoch`, the same
    /// settings, and the change log of the previous life kept as history (an audit trail, as
    /// an external log would keep it).
    func restarted(epoch: UInt64) -> NightrideCore {
        var core = NightrideCore(epoch: epoch, inactivityTimeout: inactivityTimeout, tokenLifetime: tokenLifetime, catalog: catalog)
        core.changeLog = changeLog
        core.processedMutations = processedMutations
        core.clock = clock
        return core
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
    public mutating func login(name: String, token: String, proof: PasswordProof, at now: Duration) throws(Rejection) -> LoginResponse {
        let now = advance(to: now)
        let normalized = Self.normalized(name)
        guard Self.isValid(normalized) else {
            throw Rejection(
                .invalidName,
                "a name has 1 to \(LoginRequest.maximumNameLength) characters (at most \(LoginRequest.maximumNameBytes) bytes), none of them a control character"
            )
        }
        let name = accountNames[Self.folded(normalized)] ?? normalized
        switch (users[name]?.passwordHash, proof) {
        case (let stored?, .matches(let hash)) where stored == hash:
            break
        case (nil, .sets(let hash)) where users[name] == nil:
            createUser(name, passwordHash: hash, at: now)
        case (nil, .none) where users[name] == nil:
            throw Rejection(.passwordRequired, "a new account needs a password")
        default:
            throw Rejection(.wrongPassword, "wrong name or password")
        }
        tokens[token] = IssuedToken(user: name, expiry: tokenLifetime.map { now + $0 })
        return LoginResponse(token: token, user: name)
    }

    private mutating func createUser(_ name: String, passwordHash: String, at now: Duration) {
        let first = Version(epoch: epoch, counter: 1)
        users[name] = UserRecord(
            driverMode: Versioned(false, version: first),
            ride: Versioned(.none, version: first),
            lastDriverActivity: now,
            history: FakeHistory.rides(for: name, places: catalog.places),
            passwordHash: passwordHash
        )
        accountNames[Self.folded(name)] = name
        changeLog.append(ChangeRecord(time: now, user: name, version: first, value: .driverMode(false)))
        changeLog.append(ChangeRecord(time: now, user: name, version: first, value: .ride(.none)))
    }

    /// The stored password hash of the account `name` names (as a login would spell it, in any
    /// case), `nil` for no such account.
    public func passwordHash(of name: String) -> String? {
        let normalized = Self.normalized(name)
        return users[accountNames[Self.folded(normalized)] ?? normalized]?.passwordHash
    }

    /// A name as the server keeps it: without surrounding spaces, accents composed (NFC), so
    /// that the two spellings of "é" are one user.
    private static func normalized(_ name: String) -> String {
        name.trimmingCharacters(in: .whitespacesAndNewlines).precomposedStringWithCanonicalMapping
    }

    /// The key that makes names one account whatever their case ("Ann", "ANN" and "ann").
    private static func folded(_ normalized: String) -> String {
        normalized.folding(options: [.caseInsensitive], locale: nil)
    }

    /// The account a login name means, as a key: spaces trimmed, accents composed, case
    /// folded. Failed sign-ins are counted per account, so that "Ann" and "ANN" share a limit.
    static func accountKey(of name: String) -> String {
        folded(normalized(name))
    }

    /// Whether a normalized name is acceptable: not empty, within the limits in characters and
    /// bytes, and free of control and format characters (which would hide or reorder text).
    private static func isValid(_ name: String) -> Bool {
        !name.isEmpty
            && name.count <= LoginRequest.maximumNameLength
            && name.utf8.count <= LoginRequest.maximumNameBytes
            && !name.unicodeScalars.contains { scalar in
                scalar.properties.generalCategory == .control || scalar.properties.generalCategory == .format
            }
    }

    /// The mutation ids whose answers are remembered for `user`, for tests and diagnostics.
    func rememberedMutationIDs(of user: String) -> [String] {
        users[user].map { Array($0.answers.keys) } ?? []
    }

    /// The user a token was issued to, while it is valid at `now` (`nil` checks no expiry).
    public func user(forToken token: String, at now: Duration? = nil) -> String? {
        guard let issued = tokens[token] else { return nil }
        if let now, let expiry = issued.expiry, now >= expiry { return nil }
        return issued.user
    }

    /// Forgets every token of `user` (of every user when `nil`), as a server that lost its
    /// sessions would: their clients get 401 until they sign in again.
    public mutating func revokeTokens(of user: String? = nil) {
        tokens = tokens.filter { user != nil && $0.value.user != user }
    }

    /// The newest mutation of `client` that the server processed for `user` (applied or
    /// rejected): what a value read by that client says as its `lastMutationID`.
    public func lastMutationID(of user: String, client: String?) -> UInt64? {
        client.flatMap { users[user]?.lastMutationIDs[$0] }
    }

    /// Every user's name, sorted.
    public var userNames: [String] {
        users.keys.sorted()
    }

    /// The user's driver mode now.
    public func driverMode(of user: String) -> Versioned<Bool>? {
        users[user]?.driverMode
    }

    /// The user's ride status now.
    public func rideStatus(of user: String) -> Versioned<RideStatus>? {
        users[user]?.ride
    }

    /// Both of the user's resources now.
    public func snapshot(of user: String) -> UserSnapshot? {
        users[user].map { UserSnapshot(driverMode: $0.driverMode, ride: $0.ride) }
    }

    /// One page of the user's past rides, newest first.
    ///
    /// The cursor counts rides from the oldest, so pages stay put when a newly finished ride is
    /// added on top; `next` is the path of the following page, `nil` on the last one.
    public func history(of user: String, cursor: String? = nil, pageSize: Int = 10) throws(Rejection) -> HistoryPage {
        guard let record = users[user] else { throw Rejection(.unknownUser, "no user \(user)") }
        let history = record.history
        var end = history.count
        if let cursor {
            guard let position = Int(cursor), (0...history.count).contains(position) else {
                throw Rejection(.invalidCursor, "unknown history cursor \(cursor)")
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

    /// Switches the user's driver mode; returns its version afterwards.
    ///
    /// Switching on counts as driver activity even when already on (it keeps the mode alive) and
    /// may bring an offer. Switching off withdraws an offer being made; it is refused while the
    /// user is driving someone. A repeated `mutationID` gets the first answer without applying
    /// again.
    public mutating func setDriverMode(
        _ on: Bool, for user: String, mutationID: String? = nil, at now: Duration
    ) throws(Rejection) -> Version {
        let now = advance(to: now)
        return try remembering(mutationID, for: user, change: "driver-mode \(on)") { core throws(Rejection) in
            try core.applyDriverMode(on, for: user, at: now)
        }.get()
    }

    /// Applies a ride action for the user; returns the version of the user's ride status
    /// afterwards. A repeated `mutationID` gets the first answer without applying again.
    public mutating func perform(
        _ action: RideAction, for user: String, mutationID: String? = nil, at now: Duration
    ) throws(Rejection) -> Version {
        let now = advance(to: now)
        return try remembering(mutationID, for: user, change: "ride \(action)") { core throws(Rejection) in
            try core.apply(action, for: user, at: now)
        }.get()
    }

    /// Switches off the driver mode of every driver inactive for `inactivityTimeout` by `now`,
    /// withdrawing the offers they were ignoring. The server's timer calls this; every other
    /// operation does it first too.
    public mutating func expireInactiveDrivers(at now: Duration) {
        _ = advance(to: now)
    }

    /// When the next inactivity switch-off is due, if any driver is waiting.
    public var nextInactivityDeadline: Duration? {
        guard let inactivityTimeout else { return nil }
        return users.values.filter(\.isIdleDriver).map { $0.lastDriverActivity + inactivityTimeout }.min()
    }

    // MARK: Internals

    /// Moves the core's time forward to `now` (never back) and applies the switch-offs due.
    private mutating func advance(to now: Duration) -> Duration {
        clock = max(clock, now)
        guard let inactivityTimeout else { return clock }
        // Names only: this runs on every request, and is almost always empty.
        let due = users.compactMap { name, record in
            record.isIdleDriver && clock - record.lastDriverActivity >= inactivityTimeout ? name : nil
        }
        guard !due.isEmpty else { return clock }
        for name in due.sorted() {
            switchDriverModeOff(for: name, at: clock)
        }
        dispatch(at: clock)
        return clock
    }

    /// Runs `body` unless `mutationID` was seen for `user`, in which case the first answer is
    /// returned; rejections are remembered too, so a retry can't turn a refusal into a change.
    /// `change` says what the mutation does (route and body): an id seen with another change is
    /// refused (`mutationIDReused`), since the first answer is not an answer to it.
    private mutating func remembering(
        _ mutationID: String?, for user: String, change: String,
        _ body: (inout NightrideCore) throws(Rejection) -> Version
    ) -> Result<Version, Rejection> {
        guard users[user] != nil else { return .failure(Rejection(.unknownUser, "no user \(user)")) }
        if let mutationID, let remembered = users[user]?.answers[mutationID] {
            guard remembered.change == change else {
                return .failure(Rejection(.mutationIDReused, "Mutation-ID \(mutationID) was used for another change"))
            }
            return remembered.answer
        }
        let answer: Result<Version, Rejection>
        do throws(Rejection) {
            answer = .success(try body(&self))
        } catch {
            answer = .failure(error)
        }
        if let mutationID {
            users[user]?.remember(answer, to: change, for: mutationID, limit: Self.rememberedMutations)
            let applied = if case .success = answer { true } else { false }
            processedMutations.append(ProcessedMutation(user: user, id: mutationID, epoch: epoch, applied: applied))
        }
        return answer
    }

    private mutating func applyDriverMode(_ on: Bool, for user: String, at now: Duration) throws(Rejection) -> Version {
        guard let record = users[user] else { throw Rejection(.unknownUser, "no user \(user)") }
        if on {
            users[user]?.lastDriverActivity = now
            setDriverModeValue(true, for: user, at: now)
            dispatch(at: now)
        } else if record.driverMode.value {
            switch record.ride.value {
            case .approaching(let ride) where ride.driver == user, .riding(let ride) where ride.driver == user:
                throw Rejection(.driverBusy, "driver mode can't be switched off during a ride you drive")
            default:
                switchDriverModeOff(for: user, at: now)
                dispatch(at: now)
            }
        }
        return users[user]!.driverMode.version
    }

    /// Turns driver mode off, giving back a ride being offered to the user.
    private mutating func switchDriverModeOff(for user: String, at now: Duration) {
        if case .incoming(let ride) = users[user]?.ride.value {
            withdrawOffer(ride.id, at: now)
        }
        setDriverModeValue(false, for: user, at: now)
    }

    mutating func setDriverModeValue(_ on: Bool, for user: String, at now: Duration) {
        guard let record = users[user], record.driverMode.value != on else { return }
        let version = Version(epoch: epoch, counter: record.driverMode.version.counter + 1)
        users[user]?.driverMode = Versioned(on, version: version)
        changeLog.append(ChangeRecord(time: now, user: user, version: version, value: .driverMode(on)))
    }

    mutating func setRideStatus(_ status: RideStatus, for user: String, at now: Duration) {
        guard let record = users[user], record.ride.value != status else { return }
        let version = Version(epoch: epoch, counter: record.ride.version.counter + 1)
        users[user]?.ride = Versioned(status, version: version)
        changeLog.append(ChangeRecord(time: now, user: user, version: version, value: .ride(status)))
    }

    mutating func makeRideID() -> (id: String, number: Int) {
        defer { nextRideNumber += 1 }
        return ("r\(nextRideNumber)", nextRideNumber)
    }
}

/// A login's token: whose, and until when.
private struct IssuedToken: Sendable {
    let user: String
    let expiry: Duration?
}
