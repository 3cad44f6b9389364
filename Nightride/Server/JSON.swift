import Foundation
import Hummingbird
import NightrideModel
import StateLoopWire

/// JSON in and out of the routes, with sorted keys so that answers are byte-for-byte repeatable.
enum JSON {
    /// One encoder for every message, rather than one per push built under the server's lock.
    private static let encoder: JSONEncoder = {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]
        return encoder
    }()
    /// One decoder for every request body and stored value the server reads.
    static let decoder = JSONDecoder()

    static func data(_ value: some Encodable) -> Data? {
        try? encoder.encode(value)
    }

    static func string(_ value: some Encodable) -> String? {
        data(value).map { String(decoding: $0, as: UTF8.self) }
    }

    /// A JSON response of `value`.
    static func response(_ value: some Encodable, status: HTTPResponse.Status = .ok) -> Response {
        guard let data = data(value) else { return Response(status: .internalServerError) }
        return Response(
            status: status,
            headers: [.contentType: "application/json"],
            body: ResponseBody(byteBuffer: ByteBuffer(bytes: data))
        )
    }

    /// An error response with an ``ErrorBody`` body.
    static func error(_ status: HTTPResponse.Status, _ code: String, _ message: String) -> Response {
        response(ErrorBody(error: code, message: message), status: status)
    }

    /// The request body decoded as `T`, or `nil` when it is missing, too big or malformed.
    static func decode<T: Decodable>(_ type: T.Type, from request: Request) async -> T? {
        var request = request
        guard let buffer = try? await request.collectBody(upTo: 64 * 1024) else { return nil }
        return try? decoder.decode(T.self, from: Data(buffer.readableBytesView))
    }
}
