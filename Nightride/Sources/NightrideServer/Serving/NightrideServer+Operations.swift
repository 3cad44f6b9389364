import Foundation
import NightrideModel
import StateLoopServer
import StateLoopWire

/// The ride rules in the store's transactions: the two mutation routes, server-side changes, the
/// inactivity timer and sessions.
extension NightrideServer {
    /// Declares the two values clients follow and the mutations that change them.
    func declareResources(on sync: SyncServer<NightrideAccess>) {
        sync.serve(NightrideResources.driverMode, at: "me/driver-mode") { user, _ in user }
        sync.serve(NightrideResources.ride, at: "me/ride") { user, _ in user }
        sync.mutation(at: "me/driver-mode", body: DriverModeChange.self, changes: NightrideResources.driverMode, key: { user, _ in user }) {
            [weak self] transaction, user, change in
            try self?.apply(in: transaction, for: user) { try $0.setDriverMode(change.on, for: user) }
        }
        sync.mutation(at: "me/ride", body: RideAction.self, changes: NightrideResources.ride, key: { user, _ in user }) {
            [weak self] transaction, user, action in
            try self?.apply(in: transaction, for: user) { try $0.perform(action, for: user) }
        }
    }

    /// Runs a mutation's operation of the rules (after the switch-offs due). A refusal becomes
    /// the kit's refusal, which it remembers for retries and the client takes as final.
    private func apply(
        in transaction: ServerTransaction, for user: String, _ body: (inout RideOperation<StoreWorld>) throws -> Void
    ) throws {
        do {
            try StoreWorld.operate(in: transaction, at: wallNow, rules: rules, body)
        } catch let refusal as RideRefusal {
            throw refusal.mutationRefusal
        }
    }

    // MARK: Server-side changes

    /// Switches `user`'s driver mode as the server itself (a demo's server-side event); pushed
    /// like any change.
    ///
    /// - Throws: the ``RideRefusal`` of the rules, or the store's error.
    public func setDriverMode(_ on: Bool, for user: String) async throws {
        try await operate { try $0.setDriverMode(on, for: user) }
    }

    /// Switches the driver mode of every user of `users` in one transaction: one commit, one push
    /// per socket.
    public func setDriverModes(_ on: Bool, for users: [String]) async throws {
        try await operate { operation in
            for user in users { try operation.setDriverMode(on, for: user) }
        }
    }

    /// Applies a ride action of `user` as the server itself (a demo's server-side event).
    public func perform(_ action: RideAction, for user: String) async throws {
        try await operate { try $0.perform(action, for: user) }
    }

    private func operate(_ body: @escaping @Sendable (inout RideOperation<StoreWorld>) throws -> Void) async throws {
        let sync = try await openData().sync
        let (now, rules) = (wallNow, rules)
        try await sync.update { transaction in try StoreWorld.operate(in: transaction, at: now, rules: rules, body) }
    }

    // MARK: Inactivity

    /// The inactivity switch-offs as they fall due, pushed without waiting for a request: the
    /// kit's timed update on the dispatch book's next deadline, waking at least every quarter
    /// timeout (at most a second), since a driver switching on meanwhile brings a deadline of
    /// their own. `nil` when nothing ever falls due.
    package func inactivityTimer(on sync: SyncServer<NightrideAccess>) -> TimedUpdate<NightrideAccess>? {
        guard let timeout = rules.inactivityTimeout else { return nil }
        let rules = rules
        return TimedUpdate(
            "inactivity", on: sync, clock: wallClock, maximumPause: min(.seconds(1), max(.milliseconds(10), timeout / 4))
        ) { transaction in
            try StoreWorld.dispatchBook(in: transaction).nextInactivityDeadline(timeout: timeout).map(WallTime.date)
        } update: { transaction, now in
            try StoreWorld.operate(in: transaction, at: WallTime.of(now), rules: rules) {
                $0.book.nextInactivityDeadline(timeout: timeout)
            }.map(WallTime.date)
        }
    }

    // MARK: Sessions

    /// Ends the sessions of `user` (of everyone when `nil`); the kit closes their push sockets
    /// once that is committed, as a server that lost its sessions would: their clients are
    /// answered 401 until they sign in again.
    public func revokeSessions(of user: String? = nil) async throws {
        let life = try await openData()
        try await life.sync.update { [sessions = life.sessions] transaction in
            if let user {
                try sessions.revoke(of: user, in: transaction)
                try SessionsBeforeSlots.revoke(account: AccountName.key(ofLogin: user), in: transaction)
            } else {
                try sessions.revokeAll(in: transaction)
            }
        }
    }

    /// The user of a live session token at the server's time; `nil` for an unknown, expired or
    /// revoked one.
    public func user(forToken token: String) async throws -> String? {
        try await openData().sync.access.user(token)
    }

    /// The account stored under `key`, read without a transaction.
    func account(_ key: String) async throws -> Account? {
        let (stored, _) = try await openData().store.read(NightrideResources.account.key(key), lastMutationIDOf: nil, scope: "")
        return try stored.map { try JSONDecoder().decode(Account.self, from: $0.json) }
    }

    /// One page of `user`'s past rides, newest first, of `pageSize` rides (the configuration's
    /// by default), as `GET /me/history` answers it.
    public func history(of user: String, cursor: String? = nil, pageSize: Int? = nil) async throws -> HistoryPage {
        let size = pageSize ?? configuration.historyPageSize
        return try await openData().sync.read { transaction in
            try StoreWorld.historyPage(of: user, cursor: cursor, pageSize: size, in: transaction)
        }
    }
}
