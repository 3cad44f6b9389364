import AsyncHTTPClient
import Foundation
import StateLoopSync

/// Sends mutations over HTTP: `POST url` with the mutation as JSON and its client mutation id in
/// the `Mutation-ID` header; expects `{"version": {"epoch": 0, "counter": 15}}`, the version at
/// which the server applied it.
///
/// A server that honours `Mutation-ID` answers a repeated id with the version of the first time
/// and does not apply the mutation again, which makes the retries of `OptimisticResource` safe.
/// A status outside 200–299 throws `HTTPStatusError` (with the server's `Retry-After`, if
/// usable); an answer over `maximumResponseBytes` throws ``ResponseTooLargeError``.
public struct HTTPMutationSender<M: Encodable & Sendable>: Sendable {
    private let url: URL
    private let headers: [String: String]
    private let transport: any SyncTransport
    private let maximumResponseBytes: Int

    /// Mutations to `url`, with extra `headers` (an `Authorization` bearer token, say).
    ///
    /// - Parameters:
    ///   - url: Where each mutation is posted.
    ///   - headers: Extra headers sent with every mutation (an `Authorization` bearer token,
    ///     say), besides `Mutation-ID`.
    ///   - client: The AsyncHTTPClient to send with; `nil` (the default) shares one client for
    ///     the process (see ``HTTPPull/init(url:headers:client:maximumResponseBytes:)``).
    ///   - maximumResponseBytes: The largest answer accepted (4 MiB by default, far more than an
    ///     acknowledgement needs); a larger one is cut as it arrives and refused (see
    ///     ``ResponseTooLargeError``).
    public init(
        url: URL,
        headers: [String: String] = [:],
        client: HTTPClient? = nil,
        maximumResponseBytes: Int = 4 << 20
    ) {
        self.init(url: url, headers: headers, transport: NetworkTransport(client: client), maximumResponseBytes: maximumResponseBytes)
    }

    /// Mutations to `url` over `transport`.
    init(url: URL, headers: [String: String], transport: any SyncTransport, maximumResponseBytes: Int) {
        self.url = url
        self.headers = headers
        self.transport = transport
        self.maximumResponseBytes = maximumResponseBytes
    }

    /// Sends `mutation` with `id`; returns the version the server reached.
    public func callAsFunction(_ mutation: M, _ id: MutationID) async throws -> Version {
        // Keys sorted: a retry sends the same bytes, which a server may compare to tell a retry
        // from another mutation under the same id.
        let encoder = JSONEncoder()
        encoder.outputFormatting = .sortedKeys
        let headers = headers.merging(["Mutation-ID": id.rawValue, "Content-Type": "application/json"]) { _, new in new }
        let request = TransportRequest(method: "POST", url: url, headers: headers, body: try encoder.encode(mutation))
        let data = try await transport.body(of: request, limit: maximumResponseBytes)
        return try JSONDecoder().decode(MutationReceipt.self, from: data).version
    }
}
