import AsyncHTTPClient
import Foundation
import StateLoopSync

/// A pull source over HTTP: `GET url`, decoding a `Versioned<Value>` from JSON
/// (`{"version": {"epoch": 0, "counter": 8}, "value": …}`).
///
/// A status outside 200–299 throws `HTTPStatusError` with the server's `Retry-After` (in
/// seconds or as a date; an unusable one is ignored), which `FailureKind.classify(_:)` turns
/// into a retry or a stop; a body over `maximumResponseBytes` throws ``ResponseTooLargeError``;
/// transport errors are thrown as AsyncHTTPClient reports them (transient). A cancelled pull
/// ends at once, its connection closed.
public struct HTTPPull<Value: Decodable & Sendable>: Sendable {
    private let request: TransportRequest
    private let transport: any SyncTransport
    private let maximumResponseBytes: Int

    /// A pull of `url`, with extra `headers` (an `Authorization` bearer token, say).
    ///
    /// - Parameters:
    ///   - url: The resource's URL, fetched with `GET` on every pull.
    ///   - headers: Extra headers sent with every pull (an `Authorization` bearer token, say).
    ///   - client: The AsyncHTTPClient to send with; `nil` (the default) shares one client for
    ///     the process, which fails a request at once when its connection cannot be made (the
    ///     resource's retry policy then decides when to try again).
    ///   - maximumResponseBytes: The largest body accepted (4 MiB by default); a larger one is
    ///     cut as it arrives and refused rather than decoded and kept (see
    ///     ``ResponseTooLargeError``).
    public init(
        url: URL,
        headers: [String: String] = [:],
        client: HTTPClient? = nil,
        maximumResponseBytes: Int = 4 << 20
    ) {
        self.init(url: url, headers: headers, transport: NetworkTransport(client: client), maximumResponseBytes: maximumResponseBytes)
    }

    /// A pull of `url` over `transport`.
    init(url: URL, headers: [String: String], transport: any SyncTransport, maximumResponseBytes: Int) {
        request = TransportRequest(method: "GET", url: url, headers: headers)
        self.transport = transport
        self.maximumResponseBytes = maximumResponseBytes
    }

    /// Fetches and decodes the current value.
    public func callAsFunction() async throws -> Versioned<Value> {
        let data = try await transport.body(of: request, limit: maximumResponseBytes)
        return try JSONDecoder().decode(VersionedPayload<Value>.self, from: data).versioned
    }
}

/// The JSON shape of a versioned value on the wire.
struct VersionedPayload<Value: Decodable & Sendable>: Decodable {
    let version: Version
    let value: Value
    let lastMutationID: UInt64?

    var versioned: Versioned<Value> {
        Versioned(value, version: version, lastMutationID: lastMutationID)
    }
}
