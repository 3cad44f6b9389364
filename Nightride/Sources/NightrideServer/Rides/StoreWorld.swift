import NightrideModel
import StateLoopServer

/// The ride world in one store transaction of StateLoopServer.
///
/// Every write goes straight to the transaction, which holds its writes until the handler
/// returns (an operation that throws writes nothing) and then skips each key left with the value
/// the store holds: a value set and set back is no change, a value set twice is one, and a new
/// user's values, which the store does not hold yet, are written.
struct StoreWorld: RideWorld {
    private let transaction: ServerTransaction
    /// The next history sequence number per user, once known in this operation: the
    /// transaction's pages do not see its own writes.
    private var nextHistory: [String: Int] = [:]
    /// The users' values as this operation knows them, read or written: the rules ask for the
    /// same user's values several times in one operation, and each read of a value not written
    /// yet would be a read from the store (a round trip on PostgreSQL, under the dispatch
    /// book's lock).
    private let known = KnownValues()

    /// A world reading and writing through `transaction`.
    init(_ transaction: ServerTransaction) {
        self.transaction = transaction
    }

    func driverMode(of user: String) throws -> Bool? {
        try value(of: NightrideResources.driverMode, user, known: \.driverModes)
    }

    func rideStatus(of user: String) throws -> RideStatus? {
        try value(of: NightrideResources.ride, user, known: \.rides)
    }

    /// `user`'s value of `resource`, read from the transaction the first time only.
    private func value<Value>(
        of resource: ServerResource<Value>, _ user: String, known values: ReferenceWritableKeyPath<KnownValues, [String: Value?]>
    ) throws -> Value? {
        if let value = known[keyPath: values][user] { return value }
        let value = try transaction.read(resource, user)
        known[keyPath: values][user] = .some(value)
        return value
    }

    mutating func setDriverMode(_ on: Bool, for user: String) throws {
        try transaction.write(on, to: NightrideResources.driverMode, user)
        known.driverModes[user] = .some(on)
    }

    mutating func setRideStatus(_ status: RideStatus, for user: String) throws {
        try transaction.write(status, to: NightrideResources.ride, user)
        known.rides[user] = .some(status)
    }

    func account(_ key: String) throws -> Account? {
        try transaction.read(NightrideResources.account, key)
    }

    mutating func createAccount(_ account: Account, key: String, history: [Ride]) throws {
        try transaction.write(account, to: NightrideResources.account, key)
        try setDriverMode(false, for: account.name)
        try setRideStatus(.none, for: account.name)
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

    mutating func rateNewestRide(_ id: String, stars: Int, for user: String) throws {
        let sequence = try nextHistory[user].map { $0 - 1 } ?? Self.lastHistorySequence(of: user, in: transaction)
        let key = NightrideResources.historyID(of: user, sequence)
        guard var ride = try transaction.read(NightrideResources.history, key), ride.id == id else { return }
        ride.rating = stars
        try transaction.write(ride, to: NightrideResources.history, key)
    }

    /// The sequence number of `user`'s newest history row, 0 for none.
    static func lastHistorySequence(of user: String, in transaction: ServerTransaction) throws -> Int {
        let newest = try transaction.values(
            of: NightrideResources.history, prefix: NightrideResources.historyPrefix(of: user), limit: 1, descending: true
        )
        return newest.first.flatMap { NightrideResources.historySequence(of: $0.id) } ?? 0
    }

    /// Runs one operation of the rules at `now` in `transaction`: the switch-offs due first, then
    /// `body`. What it throws leaves the transaction's writes unmade (the kit discards them).
    static func operate<Result>(
        in transaction: ServerTransaction, at now: Duration, rules: RideRules,
        _ body: (inout RideOperation<StoreWorld>) throws -> Result
    ) throws -> Result {
        var operation = try RideOperation(on: StoreWorld(transaction), at: now, rules: rules)
        try operation.expireInactiveDrivers()
        let result = try body(&operation)
        _ = try operation.finish()
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
                throw RideRefusal(.invalidCursor, "unknown history cursor \(cursor)")
            }
            end = position
        }
        let size = max(1, pageSize)
        let rows =
            end == 0
            ? []
            : try transaction.values(
                of: NightrideResources.history, prefix: NightrideResources.historyPrefix(of: user),
                after: NightrideResources.historyID(of: user, end + 1), limit: size, descending: true
            )
        let start = max(0, end - size)
        return HistoryPage(items: rows.map(\.value), next: start > 0 ? "/me/history?cursor=\(start)" : nil)
    }
}

/// The users' values a ``StoreWorld`` knows, by user (`.some(nil)`: read, none stored). A
/// class, so that the world's reads, which do not mutate it, can remember them.
private final class KnownValues {
    var driverModes: [String: Bool?] = [:]
    var rides: [String: RideStatus?] = [:]
}
