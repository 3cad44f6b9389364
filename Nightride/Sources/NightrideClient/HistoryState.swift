import Foundation
import NightrideModel
import StateLoopSyncTransports

/// The ride history, loaded page by page as the user scrolls. The address of the next page is
/// part of the state (it comes from the previous page), and the feedback that loads a page
/// queries it: a page request exists only when the user wants more and there is more.
public struct HistoryState: Codable, Sendable, Equatable {
    /// The rides loaded so far, newest first.
    public var rides: [Ride] = []
    /// The address of the next page; `nil` once the last page is in.
    public var nextPage: String? = HistoryState.firstPage
    /// The user scrolled to the end and wants the next page.
    public var wantsMore = false
    /// The last page request failed; scrolling again retries.
    public var failure: String?
    /// The first page is being loaded again (the history was opened): the rows shown stay
    /// until it comes, and then it replaces them, with the rides made since.
    public var reloading = false

    /// The address of the first page, where a history starts (again).
    public static let firstPage = "/me/history"

    /// Nothing loaded yet.
    public init() {}

    /// Decodes a stored history (a journal's), and validates it: one whose next page's
    /// address does not parse is reset to its first page, asked for at once, rather than
    /// followed. A client that journaled such a link before links were checked would otherwise
    /// fail on it at every launch.
    public init(from decoder: any Decoder) throws {
        let container = try decoder.container(keyedBy: CodingKeys.self)
        rides = try container.decode([Ride].self, forKey: .rides)
        nextPage = try container.decodeIfPresent(String.self, forKey: .nextPage)
        wantsMore = try container.decode(Bool.self, forKey: .wantsMore)
        failure = try container.decodeIfPresent(String.self, forKey: .failure)
        reloading = try container.decodeIfPresent(Bool.self, forKey: .reloading) ?? false
        if let nextPage, !Self.isFollowable(nextPage) {
            self = HistoryState()
            wantsMore = true
        }
    }

    /// Encodes the history; `reloading` only while true, so that a state stored before it
    /// existed and one stored since read alike.
    public func encode(to encoder: any Encoder) throws {
        var container = encoder.container(keyedBy: CodingKeys.self)
        try container.encode(rides, forKey: .rides)
        try container.encodeIfPresent(nextPage, forKey: .nextPage)
        try container.encode(wantsMore, forKey: .wantsMore)
        try container.encodeIfPresent(failure, forKey: .failure)
        if reloading { try container.encode(true, forKey: .reloading) }
    }

    private enum CodingKeys: String, CodingKey {
        case rides, nextPage, wantsMore, failure, reloading
    }

    /// Whether `address` parses as a link (a path with its query, or an address). The API
    /// checks more (that it stays on the server); this is what the state itself can tell.
    public static func isFollowable(_ address: String) -> Bool {
        URL(string: address) != nil
    }

    /// The page to load now, if any: the query of the history feedback.
    public var pageToLoad: String? {
        reloading ? Self.firstPage : wantsMore ? nextPage : nil
    }

    /// The history was opened: its first page is loaded again, since rides ended after it was
    /// loaded (a journaled history, even before this launch) would never show otherwise.
    public mutating func reload() {
        reloading = true
        failure = nil
    }

    /// The end of the list was reached.
    public mutating func scrolledToEnd() {
        guard nextPage != nil else { return }
        wantsMore = true
        failure = nil
    }

    /// The page at `address` arrived. A page for another address (a late answer) is dropped; a
    /// page whose next link does not parse is a failed load (the API refuses such pages; this
    /// keeps one from an older journal's events out of the state when they are replayed).
    public mutating func loaded(_ page: HistoryPage, from address: String) {
        let replaces = reloading && address == Self.firstPage
        guard replaces || address == nextPage else { return }
        if let next = page.next, !Self.isFollowable(next) {
            failed("\(ForeignLinkError(link: next))", from: address)
            return
        }
        rides = replaces ? page.items : rides + page.items
        nextPage = page.next
        wantsMore = false
        reloading = false
    }

    /// The page at `address` failed.
    public mutating func failed(_ message: String, from address: String) {
        guard (reloading && address == Self.firstPage) || address == nextPage else { return }
        failure = message
        wantsMore = false
        reloading = false
    }
}
