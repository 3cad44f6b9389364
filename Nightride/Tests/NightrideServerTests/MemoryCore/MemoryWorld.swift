import NightrideModel
import StateLoopWire

@testable import NightrideHarness
@testable import NightrideServer

/// The ride world in memory: committed values with their versions, and one operation's writes
/// held apart until ``commit(at:)`` turns each changed value into one new version.
///
/// Held by value: an operation works on a copy, so one that throws leaves the original as it
/// was. The copy shares the committed dictionaries with the original; only the small pending
/// part is written during an operation, so starting one copies nothing large.
struct MemoryWorld: RideWorld, Sendable {
    /// The epoch of every version.
    let epoch: UInt64
    /// Every user's two values as committed, with their versions.
    private(set) var values: [String: UserSnapshot] = [:]
    private var accounts: [String: Account] = [:]
    private(set) var book = DispatchBook()
    /// Each user's past rides, oldest first.
    private(set) var histories: [String: [Ride]] = [:]
    private var pending = Pending()

    /// One operation's writes.
    private struct Pending: Sendable {
        var driverModes: [String: Bool] = [:]
        var rides: [String: RideStatus] = [:]
        /// The values written, in the order first written: the order of the change records.
        var order: [(user: String, resource: UserValue)] = []
        var accounts: [String: Account] = [:]
        var histories: [String: [Ride]] = [:]
        var book: DispatchBook?
        /// The users created: their first values are written whatever they are.
        var created: Set<String> = []
    }

    init(epoch: UInt64) {
        self.epoch = epoch
    }

    func driverMode(of user: String) -> Bool? {
        pending.driverModes[user] ?? values[user]?.driverMode.value
    }

    func rideStatus(of user: String) -> RideStatus? {
        pending.rides[user] ?? values[user]?.ride.value
    }

    mutating func setDriverMode(_ on: Bool, for user: String) {
        if pending.driverModes.updateValue(on, forKey: user) == nil {
            pending.order.append((user, .driverMode))
        }
    }

    mutating func setRideStatus(_ status: RideStatus, for user: String) {
        if pending.rides.updateValue(status, forKey: user) == nil {
            pending.order.append((user, .ride))
        }
    }

    func account(_ key: String) -> Account? {
        pending.accounts[key] ?? accounts[key]
    }

    mutating func createAccount(_ account: Account, key: String, history: [Ride]) {
        pending.accounts[key] = account
        pending.histories[account.name] = history
        pending.created.insert(account.name)
        setDriverMode(false, for: account.name)
        setRideStatus(.none, for: account.name)
    }

    func dispatchBook() -> DispatchBook {
        pending.book ?? book
    }

    mutating func setDispatchBook(_ book: DispatchBook) {
        pending.book = book
    }

    mutating func appendHistory(_ ride: Ride, for user: String) {
        pending.histories[user, default: histories[user] ?? []].append(ride)
    }

    mutating func rateNewestRide(_ id: String, stars: Int, for user: String) {
        var rides = pending.histories[user] ?? histories[user] ?? []
        guard let last = rides.indices.last, rides[last].id == id else { return }
        rides[last].rating = stars
        pending.histories[user] = rides
    }

    /// Makes the operation's writes the committed state: each value that differs from its
    /// committed one (or is new) gets the next version. Returns the change records, in the
    /// order the values were first written.
    mutating func commit(at time: Duration) -> [ChangeRecord] {
        var records: [ChangeRecord] = []
        for (user, resource) in pending.order {
            let isNew = pending.created.contains(user)
            switch resource {
            case .driverMode:
                guard let on = pending.driverModes[user],
                    let next = Self.next(on, over: isNew ? nil : values[user]?.driverMode, epoch: epoch)
                else { continue }
                values[user, default: Self.placeholder].driverMode = next
                records.append(ChangeRecord(time: time, user: user, version: next.version, value: .driverMode(on)))
            case .ride:
                guard let status = pending.rides[user],
                    let next = Self.next(status, over: isNew ? nil : values[user]?.ride, epoch: epoch)
                else { continue }
                values[user, default: Self.placeholder].ride = next
                records.append(ChangeRecord(time: time, user: user, version: next.version, value: .ride(status)))
            }
        }
        accounts.merge(pending.accounts) { $1 }
        histories.merge(pending.histories) { $1 }
        if let changed = pending.book {
            book = changed
        }
        pending = Pending()
        return records
    }

    /// `value` as the next version after `stored` (the first for `nil`); `nil` when it is no
    /// change.
    private static func next<Value: Equatable & Sendable>(_ value: Value, over stored: Versioned<Value>?, epoch: UInt64) -> Versioned<Value>? {
        guard stored?.value != value else { return nil }
        return Versioned(value, version: Version(epoch: epoch, counter: (stored?.version.counter ?? 0) + 1))
    }

    /// A new user's values before its first commit fills both in.
    private static let placeholder = UserSnapshot(
        driverMode: Versioned(false, version: Version(epoch: 0, counter: 0)),
        ride: Versioned(.none, version: Version(epoch: 0, counter: 0))
    )
}
