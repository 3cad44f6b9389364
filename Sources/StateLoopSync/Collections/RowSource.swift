import StateLoopWire

/// Where one subscription to a collection's query gets its rows: a fetch and a push socket,
/// transport-agnostic, as ``ResourceSources`` are for a value. StateLoopSyncTransports'
/// `SyncEndpoint` makes one for a query served by StateLoopServer; a test makes one of closures.
public struct RowSource<Row: Sendable>: Sendable {
    /// Names the subscription: two sources with one key are one subscription, whose rows and
    /// cookie a local store keeps once (the query's path, name and parameters).
    public var key: String
    /// Fetches the answer to the query from `cookie` (`nil`: none held) for `client`: the whole
    /// result or the difference since. Throws `HTTPStatusError` 404 when the query refuses the
    /// reader.
    public var fetch: @Sendable (_ cookie: String?, _ client: ClientID) async throws -> RowsDifference<Row>
    /// Fetches a page of the whole result for `client`: the rows after the id `after` (`nil`:
    /// the first page), in the order of their ids, with the id the next page starts after
    /// (`RowsDifference.next`) until the last. A first sync asks for pages when a source can
    /// fetch them, so that neither side holds the whole result at once; `nil` for a source that
    /// fetches whole results only (through ``fetch``).
    public var page: (@Sendable (_ after: String?, _ client: ClientID) async throws -> RowsDifference<Row>)?
    /// Runs until cancelled: opens a socket for `client` with the cookie `cookie()` gives then,
    /// and again after each end, handing everything that happens to `receive`, in order.
    public var push: Push

    /// The push half: `(client, cookie, receive)`.
    public typealias Push =
        @Sendable (
            _ client: ClientID, _ cookie: @escaping @Sendable () -> String?, _ receive: @escaping @Sendable (RowsPushEvent<Row>) async -> Void
        ) async -> Void

    /// A source from its parts.
    public init(
        key: String,
        fetch: @escaping @Sendable (_ cookie: String?, _ client: ClientID) async throws -> RowsDifference<Row>,
        page: (@Sendable (_ after: String?, _ client: ClientID) async throws -> RowsDifference<Row>)? = nil,
        push: @escaping Push = { _, _, _ in }
    ) {
        self.key = key
        self.fetch = fetch
        self.page = page
        self.push = push
    }
}

/// What happens on a subscription's push socket.
public enum RowsPushEvent<Row: Sendable>: Sendable {
    /// A socket opened with `cookie`: the next difference is relative to it.
    case opened(cookie: String?)
    /// A message: relative to the socket's previous message, or to its cookie for the first.
    case difference(RowsDifference<Row>)
    /// The socket closed, or could not open (the network, a server away).
    case closed
    /// The server refused the socket (a status instead of an upgrade): a fetch says why.
    case refused
    /// A message that could not be read; the socket goes on, the subscription catches up.
    case unreadable(any Error)
}
