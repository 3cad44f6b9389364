import NightrideModel
import StateLoopServer

/// The ride world in one store transaction of StateLoopServer.
///
/// The store raises a value's version on every write, so the users' values are held here until
/// ``flush()`` and written only where the operation left them different from what is stored (or
/// for a new user): a value set and set back is no change, and a value set twice is one. The
/// other resources go straight to the transaction, which holds its writes until the handler
/// returns, so an operation that throws writes nothing.
struct StoreWorld: RideWorld {
    private let transaction: ServerTransaction
    private var driverModes: [String: Bool] = [:]
    private var rides: [String: RideStatus] = [:]
    /// The values written, in the order first written.
    private var order: [(user: String, resource: Resource)] = []
    private var created: Set<String> = []
    /// The next history sequence number per user, once known in this operation.
    private var nextHistory: [String: Int] = [:]
    /// The users' values as stored, once read: ``flush()`` compares with them rather than
    /// reading and decoding each again.
    private let stored = StoredValues()

    /// A world reading and writing through `transaction`.
    init(_ transaction: ServerTransaction) {
        self.transaction = transaction
    }

    func driverMode(of user: String) throws -> Bool? {
        try driverModes[user] ?? storedDriverMode(of: user)
    }

    func rideStatus(of user: String) throws -> RideStatus? {
        try rides[user] ?? storedRideStatus(of: user)
    }

    private func storedDriverMode(of user: String) throws -> Bool? {
        try storedValue(of: NightrideResources.driverMode, user, remembered: \.driverModes)
    }

    private func storedRideStatus(of user: String) throws -> RideStatus? {
        try storedValue(of: NightrideResources.ride, user, remembered: \.rides)
    }

    /// `user`'s stored value of `resource`, read from the transaction the first time only.
    private func storedValue<Value>(
        of resource: ServerResource<Value>, _ user: String, remembered: ReferenceWritableKeyPath<StoredValues, [String: Value?]>
    ) throws -> Value? {
        if let known = stored[keyPath: remembered][user] { return known }
        let value = try transaction.read(resource, user)
        stored[keyPath: remembered][user] = .some(value)
        return value
    }

    mutating func setDriverMode(_ on: Bool, for user: String) {
        if driverModes.updateValue(on, forKey: user) == nil {
            order.append((user, .driverMode))
        }
    }

    mutating func setRideStatus(_ status: RideStatus, for user: String) {
        if rides.updateValue(status, forKey: user) == nil {
            order.append((user, .ride))
        }
    }

    func account(_ key: String) throws -> Account? {
        try transaction.read(NightrideResources.account, key)
    }

    mutating func createAccount(_ account: Account, key: String, history: [Ride]) throws {
        try transaction.write(account, to: NightrideResources.account, key)
        created.insert(account.name)
        setDriverMode(false, for: account.name)
        setRideStatus(.none, for: account.name)
        nextHistory[account.name] = 1
        for ride in history {
            try appendHistory(ride, for: account.name)
        }
    }

    func dispatchBook() throws -> DispatchBook {
        try Self.dispatchBook(in: transaction)
    }

    /// The dispatch book as `transaction` sees it (empty before the first driver).
    static func dispatchBook(in transaction: ServerTransaction) throws -> DispatchBook {
        try transaction.read(NightrideResources.dispatch, NightrideResources.dispatchID) ?? DispatchBook()
    }

    mutating func setDispatchBook(_ book: DispatchBook) throws {
        try transaction.write(book, to: NightrideResources.dispatch, NightrideResources.dispatchID)
    }

    mutating func appendHistory(_ ride: Ride, for user: String) throws {
        let sequence = try nextHistory[user] ?? Self.lastHistorySequence(of: user, in: transaction) + 1
        try transaction.write(ride, to: NightrideResources.history, NightrideResources.historyID(of: user, sequence))
        nextHistory[user] = sequence + 1
    }

    /// Writes the users' values the operation changed. Call it once, after the operation
    /// finished.
    mutating func flush() throws {
        for (user, resource) in order {
            let isNew = created.contains(user)
            switch resource {
            case .driverMode:
                guard let on = driverModes[user] else { continue }
                if try isNew || storedDriverMode(of: user) != on {
                    try transaction.write(on, to: NightrideResources.driverMode, user)
                }
            case .ride:
                guard let status = rides[user] else { continue }
                if try isNew || storedRideStatus(of: user) != status {
                    try transaction.write(status, to: NightrideResources.ride, user)
                }
            }
        }
        order = []
    }

    /// The sequence number of `user`'s newest history row, 0 for none.
    static func lastHistorySequence(of user: String, in transaction: ServerTransaction) throws -> Int {
        let newest = try transaction.values(
            of: NightrideResources.history, prefix: NightrideResources.historyPrefix(of: user), limit: 1, descending: true
        )
        return newest.first.flatMap { NightrideResources.historySequence(of: $0.id) } ?? 0
    }

    /// Runs one operation of the rules at `now` in `transaction`: the switch-offs due first, then
    /// `body`; the users' changed values are written when it returns. What it throws leaves the
    /// transaction's writes unmade (the kit discards them).
    static func operate<Result>(
        in transaction: ServerTransaction, at now: Duration, rules: RideRules,
        _ body: (inout RideOperation<StoreWorld>) throws -> Result
    ) throws -> Result {
        var operation = try RideOperation(on: StoreWorld(transaction), at: now, rules: rules)
        try operation.expireInactiveDrivers()
        let result = try body(&operation)
        var world = try operation.finish()
        try world.flush()
        return result
    }

    /// One page of `user`'s past rides, newest first, read from the stored rows.
    ///
    /// The cursor counts rides from the oldest, so pages stay put when a newly finished ride is
    /// added on top; `next` is the path of the following page, `nil` on the last one.
    ///
    /// - Throws: `invalidCursor` for a cursor the server did not hand out.
    static func historyPage(of user: String, cursor: String?, pageSize: Int, in transaction: ServerTransaction) throws -> HistoryPage {
        let count = try lastHistorySequence(of: user, in: transaction)
        var end = count
        if let cursor {
            guard let position = Int(cursor), (0...count).contains(position) else {
                throw Rejection(.invalidCursor, "unknown history cursor \(cursor)")
            }
            end = position
        }
        let size = max(1, pageSize)
        let rows = end == 0 ? [] : try transaction.values(
            of: NightrideResources.history, prefix: NightrideResources.historyPrefix(of: user),
            after: NightrideResources.historyID(of: user, end + 1), limit: size, descending: true
        )
        let start = max(0, end - size)
        return HistoryPage(items: rows.map(\.value), next: start > 0 ? "/me/history?cursor=\(start)" : nil)
    }
}

/// The values a ``StoreWorld`` read from its transaction, by user (`.some(nil)`: read, none
/// stored). A class, so that the world's reads, which do not mutate it, can remember them.
private final class StoredValues {
    var driverModes: [String: Bool?] = [:]
    var rides: [String: RideStatus?] = [:]
}
