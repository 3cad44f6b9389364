import NightrideModel

/// The ride history, loaded page by page as the user scrolls. The address of the next page is
/// part of the state (it comes from the previous page), and the feedback that loads a page
/// queries it: a page request exists only when the user wants more and there is more.
public struct HistoryState: Codable, Sendable, Equatable {
    /// The rides loaded so far, newest first.
    public var rides: [Ride] = []
    /// The address of the next page; `nil` once the last page is in.
    public var nextPage: String? = "/me/history"
    /// The user scrolled to the end and wants the next page.
    public var wantsMore = false
    /// The last page request failed; scrolling again retries.
    public var failure: String?

    /// Nothing loaded yet.
    public init() {}

    /// The page to load now, if any: the query of the history feedback.
    public var pageToLoad: String? {
        wantsMore ? nextPage : nil
    }

    /// The end of the list was reached.
    public mutating func scrolledToEnd() {
        guard nextPage != nil else { return }
        wantsMore = true
        failure = nil
    }

    /// The page at `address` arrived. A page for another address (a late answer) is dropped.
    public mutating func loaded(_ page: HistoryPage, from address: String) {
        guard address == nextPage else { return }
        rides += page.items
        nextPage = page.next
        wantsMore = false
    }

    /// The page at `address` failed.
    public mutating func failed(_ message: String, from address: String) {
        guard address == nextPage else { return }
        failure = message
        wantsMore = false
    }
}
