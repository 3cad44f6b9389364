import StateLoop
import StateLoopWire

/// The state of a live search box: what is typed, the results shown, and the query they answer.
///
/// The results of the previous query stay shown while the next one loads, and an answer is
/// applied only if it is for the query that is current, so a late answer to an old query never
/// shows. Embed it in a feature's state and drive it with ``StateLoop/Feedback/liveSearch(_:event:debounce:clock:search:)``.
public struct SearchState<Results: Sendable>: Sendable {
    /// What the user typed.
    public private(set) var text = ""
    /// The results shown; those of an earlier query while the current one loads.
    public private(set) var results: Results?
    /// The query `results` answer.
    public private(set) var resultsQuery: String?
    /// Why the current query failed, if it did.
    public private(set) var failure: String?
    /// Queries shorter than this are not searched.
    public let minimumLength: Int
    /// The query to search for, once the debounce has passed.
    public private(set) var pendingQuery: String?

    /// An empty search that searches queries of at least `minimumLength` characters.
    public init(minimumLength: Int = 3) {
        self.minimumLength = minimumLength
    }

    /// Whether a search for the current text is waiting or running.
    public var isSearching: Bool {
        pendingQuery != nil
    }

    /// Applies an event of the search box.
    public mutating func apply(_ event: SearchEvent<Results>) {
        switch event {
        case .typed(let typed):
            text = typed
            failure = nil
            pendingQuery = typed.count >= minimumLength && typed != resultsQuery ? typed : nil
        case .loaded(let query, let loaded):
            guard query == pendingQuery else { return }
            results = loaded
            resultsQuery = query
            pendingQuery = nil
        case .failed(let query, let message):
            guard query == pendingQuery else { return }
            failure = message
            pendingQuery = nil
        }
    }
}

extension SearchState: Equatable where Results: Equatable {}

/// What happens to a search box.
public enum SearchEvent<Results: Sendable>: Sendable {
    /// The user changed the text.
    case typed(String)
    /// The search for `query` answered.
    case loaded(query: String, Results)
    /// The search for `query` failed.
    case failed(query: String, String)
}

extension SearchEvent: Equatable where Results: Equatable {}

extension Feedback {
    /// Runs a live search: once the text has stayed the same for `debounce` and is long enough,
    /// searches it; a new text cancels the wait or the search in flight (switch to latest), so
    /// only the last query typed within the debounce window is requested.
    public static func liveSearch<Results: Sendable>(
        _ search: @escaping @Sendable (State) -> SearchState<Results>,
        event: @escaping @Sendable (SearchEvent<Results>) -> Event,
        debounce: Duration = .milliseconds(300),
        clock: any Clock<Duration>,
        search perform: @escaping @Sendable (String) async throws -> Results
    ) -> Feedback {
        .react(query: { search($0).pendingQuery }) { query, send in
            do {
                try await clock.sleep(for: debounce)
            } catch {
                return
            }
            do {
                await send(event(.loaded(query: query, try await perform(query))))
            } catch {
                await send(event(.failed(query: query, String(describing: error))))
            }
        }
    }
}
