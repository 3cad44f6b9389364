import Foundation
import StateLoop
import StateLoopTesting
import Testing

// The README's example, compiled and run, so that the README cannot drift from the API.

struct Page: Equatable, Sendable {
    let items: [String]
    let next: URL?
}

struct SearchAPI: Sendable {
    let firstPage: URL
    let page: @Sendable (URL) async throws -> Page
}

struct PagedSearch: Equatable, Sendable {
    var results: [String] = []
    var nextPage: URL?
    var wantsNextPage = false
    var error: String?
    var pageToLoad: URL? { wantsNextPage ? nextPage : nil }

    enum Event: Equatable, Sendable {
        case scrolledToBottom
        case loaded(Page)
        case failed(String)
    }

    static func reduce(_ state: inout PagedSearch, _ event: Event) {
        switch event {
        case .scrolledToBottom:
            state.wantsNextPage = true
        case .loaded(let page):
            state.results += page.items
            state.nextPage = page.next
            state.wantsNextPage = false
        case .failed(let message):
            state.error = message
            state.wantsNextPage = false
        }
    }

    static func feedbacks(api: SearchAPI) -> [Feedback<PagedSearch, Event>] {
        [
            .react(query: \.pageToLoad) { url in
                .loaded(try await api.page(url))
            } catch: {
                .failed("\($0)")
            }
        ]
    }
}

@MainActor
func makeSearch(api: SearchAPI) -> System<PagedSearch, PagedSearch.Event> {
    System(
        initialState: PagedSearch(nextPage: api.firstPage),
        reduce: PagedSearch.reduce,
        feedbacks: PagedSearch.feedbacks(api: api)
    )
}

@Suite("README example")
struct ReadmeExampleTests {
    static let pages: [URL: Page] = [
        URL(string: "https://example.com/1")!: Page(items: ["a", "b"], next: URL(string: "https://example.com/2")!),
        URL(string: "https://example.com/2")!: Page(items: ["c"], next: nil),
    ]
    static let api = SearchAPI(firstPage: URL(string: "https://example.com/1")!) { url in
        guard let page = pages[url] else { throw URLError(.badURL) }
        return page
    }

    @Test("scrolling loads the next page until there is none")
    func pagination() async {
        let store = await TestSystem(
            initialState: PagedSearch(nextPage: Self.api.firstPage),
            reduce: PagedSearch.reduce,
            feedbacks: PagedSearch.feedbacks(api: Self.api)
        )
        await store.send(.scrolledToBottom) { $0.wantsNextPage = true }
        await store.receive(.loaded(Self.pages[Self.api.firstPage]!)) {
            $0.results = ["a", "b"]
            $0.nextPage = URL(string: "https://example.com/2")
            $0.wantsNextPage = false
        }
        await store.send(.scrolledToBottom) { $0.wantsNextPage = true }
        await store.receive(.loaded(Page(items: ["c"], next: nil))) {
            $0.results = ["a", "b", "c"]
            $0.nextPage = nil
            $0.wantsNextPage = false
        }
        await store.send(.scrolledToBottom) { $0.wantsNextPage = true }
        await store.finish()
    }

    @MainActor
    @Test("the main-actor system from the README runs the same way")
    func mainActorSystem() async {
        let search = makeSearch(api: Self.api)
        search.send(.scrolledToBottom)
        #expect(await yieldUntil { search.state.results == ["a", "b"] })
    }
}
