import Foundation
import HTTPTypes
import Hummingbird
import NIOCore

/// The kit's JSON: one encoder for stored values and answers, with sorted keys, so that equal
/// values make equal bytes (an unchanged write is skipped by comparing them, and a repeated
/// answer is the same bytes).
enum KitJSON {
    static let encoder: JSONEncoder = {
        let encoder = JSONEncoder()
        encoder.outputFormatting = .sortedKeys
        return encoder
    }()

    static let decoder = JSONDecoder()

    /// A response carrying `body`, JSON already encoded.
    static func response(_ status: HTTPResponse.Status, _ body: Data, headers: HTTPFields = [:]) -> Response {
        var fields = headers
        fields[.contentType] = "application/json"
        return Response(status: status, headers: fields, body: ResponseBody(byteBuffer: ByteBuffer(bytes: body)))
    }
}
