import Foundation
import StateLoopSync
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// A pull source over HTTP: `GET url`, decoding a `Versioned<Value>` from JSON
/// (`{"version": {"epoch": 0, "counter": 8}, "value": …}`).
///
/// A status outside 200–299 throws ``HTTPStatusError`` with the server's `Retry-After` (in
/// seconds or as a date; an unusable one is ignored), which ``FailureKind/classify(_:)`` turns
/// into a retry or a stop; a body over `maximumResponseBytes` throws ``ResponseTooLargeError``;
/// transport errors are thrown as URLSession reports them (transient). Works on Linux through
/// FoundationNetworking.
public struct HTTPPull<Value: Decodable & Sendable>: Sendable {
    private let request: URLRequest
    private let session: URLSession
    private let maximumResponseBytes: Int

    /// A pull of `url`, with extra `headers` (an `Authorization` bearer token, say).
    ///
    /// - Parameter maximumResponseBytes: The largest body accepted (4 MiB by default); a larger
    ///   one is cut as it arrives and refused rather than decoded and kept (see
    ///   ``ResponseTooLargeError``).
    public init(
        url: URL,
        headers: [String: String] = [:],
        session: URLSession = .shared,
        maximumResponseBytes: Int = 4 << 20
    ) {
        var request = URLRequest(url: url)
        request.httpMethod = "GET"
        request.cachePolicy = .reloadIgnoringLocalCacheData
        for (name, value) in headers {
            request.setValue(value, forHTTPHeaderField: name)
        }
        self.request = request
        self.session = session
        self.maximumResponseBytes = maximumResponseBytes
    }

    /// Fetches and decodes the current value.
    public func callAsFunction() async throws -> Versioned<Value> {
        let data = try await HTTPExchange.body(of: request, session: session, limit: maximumResponseBytes)
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
