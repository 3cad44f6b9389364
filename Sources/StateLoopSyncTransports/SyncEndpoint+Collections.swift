import Foundation
import StateLoopSync
import Synchronization

extension SyncEndpoint {
    /// The source of one subscription to a collection's query served by StateLoopServer:
    /// `GET <path>/<query>?<parameters>[&cookie=]` to fetch, `&after=` to fetch a first sync's
    /// pages, and a socket on
    /// `<path>/<query>/push?…&cookie=` opened again after each end with the cookie held then.
    ///
    /// ```swift
    /// let board = server.rows(at: "/tasks", query: "byProject", parameters: ["projectID": "p1"], as: TaskRow.self)
    /// let subscription = tasks.subscribe(board)
    /// ```
    ///
    /// - Parameters:
    ///   - path: The collection's path, as the server serves it.
    ///   - query: The query's name.
    ///   - parameters: The query's parameters.
    ///   - type: The type its rows decode as.
    ///   - maximumAnswerBytes: The largest answer or push message accepted: a first answer holds
    ///     the query's whole result, 256 MiB by default.
    public func rows<Row: Codable & Sendable>(
        at path: String, query: String, parameters: [String: String] = [:], as type: Row.Type = Row.self,
        maximumAnswerBytes: Int = 256 << 20
    ) -> RowSource<Row> {
        let route = (path.hasSuffix("/") ? String(path.dropLast()) : path) + "/" + query
        let sorted = parameters.sorted { $0.key < $1.key }
        let address: @Sendable (String, _ cookie: String?, _ after: String?) -> URL = { route, cookie, after in
            var components = URLComponents(url: url(route), resolvingAgainstBaseURL: false)!
            let items =
                sorted.map { URLQueryItem(name: $0.key, value: $0.value) } + (cookie.map { [URLQueryItem(name: "cookie", value: $0)] } ?? [])
                + (after.map { [URLQueryItem(name: "after", value: $0)] } ?? [])
            components.queryItems = items.isEmpty ? nil : items
            return components.url!
        }
        let key = address(route, nil, nil).absoluteString
        let headers = headers
        let transport = transport
        let push = WebSocketPush<RowsDifference<Row>>(
            url: pushURL(route + "/push"),
            headers: headers,
            initialBackoff: reconnectBackoff,
            maxBackoff: reconnectBackoff * 4,
            handshakeTimeout: policy.requestTimeout ?? .seconds(10),
            firstHandshakeTimeout: .seconds(1),
            clock: clock,
            logger: logger
        ).over(transport)
        let pushAddress: @Sendable (String?) -> String = { cookie in Self.webSocketAddress(of: address(route + "/push", cookie, nil)) }
        let get: @Sendable (URL, ClientID) async throws -> RowsDifference<Row> = { address, clientID in
            let request = TransportRequest(method: "GET", url: address, headers: headers.merging(["Client-ID": clientID.rawValue]) { _, id in id })
            let data = try await transport.body(of: request, limit: maximumAnswerBytes)
            return try RowsDifference<Row>.decode(message: data)
        }
        return RowSource(
            key: key,
            fetch: { cookie, clientID in try await get(address(route, cookie, nil), clientID) },
            // The first page is `after=`: from the first row.
            page: { after, clientID in try await get(address(route, nil, after ?? ""), clientID) },
            push: { clientID, cookie, receive in
                // The cookie of the socket being opened, for the event that says it opened.
                let opening = OpeningCookie()
                let source = push.following(
                    address: {
                        let held = cookie()
                        opening.set(held)
                        return pushAddress(held)
                    },
                    headers: ["Client-ID": clientID.rawValue],
                    maximumMessageBytes: maximumAnswerBytes,
                    decodeValue: { data in
                        Versioned(try RowsDifference<Row>.decode(message: data), version: Version(counter: 0))
                    },
                    onConnectionChange: { connected in
                        await receive(connected ? .opened(cookie: opening.get()) : .closed)
                    }
                )
                await source.run { message in
                    switch message {
                    case .value(let difference): await receive(.difference(difference.value))
                    // A hint comes before the server closes the socket: the next one catches up.
                    case .changed: break
                    case .failed(let error) where error is PushRefusedError: await receive(.refused)
                    case .failed(let error): await receive(.unreadable(error))
                    }
                }
            }
        )
    }

    /// Sends mutations of a collection's rows: `POST path` with the mutation as JSON and its
    /// `Mutation-ID`, as ``optimisticResource(at:for:pushPath:store:clientID:)`` sends a value's. Give it
    /// to a local collection (StateLoopCollections), which sends its queue through it, in order.
    public func rowMutations<M: Encodable & Sendable>(at path: String, for type: M.Type = M.self) -> @Sendable (M, MutationID) async throws -> Version
    {
        let sender = HTTPMutationSender<M>(url: url(path), headers: headers, transport: transport, maximumResponseBytes: maximumResponseBytes)
        return { mutation, id in try await sender(mutation, id) }
    }
}

/// The cookie an attempt of a collection's socket was opened with.
private final class OpeningCookie: Sendable {
    private let cookie = Mutex<String?>(nil)

    func set(_ value: String?) { cookie.withLock { $0 = value } }
    func get() -> String? { cookie.withLock { $0 } }
}
