import StateLoopSync

/// A push to one client's channel: the channel, and the message.
typealias ListPush = (delivery: AsyncStream<PushMessage<[String]>>.Continuation, message: PushMessage<[String]>)

/// The server side of the mutations scenario: the shared list, the sessions of the devices,
/// and what a client's requests do. ``ListServer`` is an actor written for the scenario;
/// ``KitListServer`` is the server kit itself (`SyncServer` on an in-memory SQLite store),
/// answering through its routes.
protocol ListBackend: Sendable {
    /// The list as `client` on `device` reads it, with the newest of its mutations applied;
    /// throws `HTTPStatusError` 401 when the device's session has expired.
    func value(for client: ClientID, on device: Int) async throws -> Versioned<[String]>

    /// Applies `append` under `id` from `device`, once however often it comes: the version it
    /// was applied at, and the pushes to send.
    func apply(_ append: Append, id: MutationID, on device: Int) async throws -> (Version, [ListPush])

    /// Pushes to `client` of `device` on `delivery` from now on.
    func subscribe(_ client: ClientID, on device: Int, _ delivery: AsyncStream<PushMessage<[String]>>.Continuation) async

    /// Stops pushing to `client` (its app was killed).
    func unsubscribe(_ client: ClientID) async

    /// Ends `device`'s session: its requests are answered 401 and nothing is pushed to it.
    func expire(_ device: Int) async

    /// A new session for `device`.
    func signIn(_ device: Int) async

    /// The push channel of `client` on `device` when the server has sockets of its own (a
    /// resource's `ResourceSources.push`), or `nil` for one that pushes through ``subscribe(_:on:_:)``.
    func pushSocket(
        for client: ClientID, on device: Int, network: SimulatedNetwork
    ) -> (@Sendable (_ receive: @escaping @Sendable (PushMessage<[String]>) async -> Void) async -> Void)?

    /// The list as the server holds it.
    var list: [String] { get async throws }

    /// Ends every push channel.
    func finish() async
}

extension ListServer: ListBackend {
    nonisolated func pushSocket(
        for client: ClientID, on device: Int, network: SimulatedNetwork
    ) -> (@Sendable (_ receive: @escaping @Sendable (PushMessage<[String]>) async -> Void) async -> Void)? {
        nil
    }
}
