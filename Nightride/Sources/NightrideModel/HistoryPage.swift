/// One page of a user's past rides, newest first: the answer to `GET /me/history`.
///
/// `{"items": [{…}, …], "next": "/me/history?cursor=20"}`; `next` is `null` on the last page.
public struct HistoryPage: Codable, Sendable, Hashable {
    /// The rides of this page, newest first; the user was the passenger or the driver.
    public var items: [Ride]
    /// The path and query of the next page, to resolve against the server's address.
    public var next: String?

    /// A page from its parts.
    public init(items: [Ride], next: String?) {
        self.items = items
        self.next = next
    }
}
