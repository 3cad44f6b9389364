import Foundation
import StateLoop

/// The README's first example (paginated search), compiled.
enum ReadmeSearch {
    // README.md:
    struct Search: Sendable {
        var results: [String] = []
        var nextPage: URL?
        var wantsNextPage = false
        var pageToLoad: URL? { wantsNextPage ? nextPage : nil }  // a query on the state

        enum Event: Sendable {
            case scrolledToBottom
            case loaded(Page)
            case failed(String)
        }
    }

    @MainActor
    func makeSearch(api: SearchAPI) -> System<Search, Search.Event> {
        System(
            initialState: Search(nextPage: api.firstPage),
            reduce: Search.reduce,
            feedbacks: [
                .react(query: \.pageToLoad) { url in
                    .loaded(try await api.page(url))
                } catch: {
                    .failed("\($0)")
                }
            ]
        )
    }
    // End of the example.

    struct Page: Sendable {
        var results: [String]
        var next: URL?
    }

    struct SearchAPI: Sendable {
        var firstPage: URL?
        var page: @Sendable (URL) async throws -> Page
    }
}

extension ReadmeSearch.Search {
    static func reduce(_ state: inout Self, _ event: Event) {
        switch event {
        case .scrolledToBottom: state.wantsNextPage = true
        case .loaded(let page):
            state.results += page.results
            state.nextPage = page.next
            state.wantsNextPage = false
        case .failed: state.wantsNextPage = false
        }
    }
}
