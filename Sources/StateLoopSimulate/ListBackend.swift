import StateLoopSync

/// A push to one client's channel: the channel, and the message.
typealias ListPush = (delivery: AsyncStream<PushMessage<[String]>>.Continuation, message: PushMessage<[String]>)

/// The server side of the mutations scenario: the shared list, the sessions of the devices and
/// their push channels. ``ListServer`` is an actor written for the scenario, which its clients
/// reach through closures; ``KitListServer`` is the server kit itself (`SyncServer` on an
/// in-memory SQLite store), which its clients reach through a `SyncEndpoint`, as an app does.
protocol ListBackend: Sendable {
    /// Pushes to `client` of `device` on `delivery` from now on.
    func subscribe(_ client: ClientID, on device: Int, _ delivery: AsyncStream<PushMessage<[String]>>.Continuation) async

    /// Stops pushing to `client` (its app was killed).
    func unsubscribe(_ client: ClientID) async

    /// Ends `device`'s session: its requests are answered 401 and nothing is pushed to it.
    func expire(_ device: Int) async

    /// A new session for `device`.
    func signIn(_ device: Int) async

    /// The list as the server holds it.
    var list: [String] { get async throws }

    /// Ends every push channel.
    func finish() async
}

extension ListServer: ListBackend {}
