import Foundation
import StateLoopWire

/// The JSON the kit sends, built from the stored JSON without decoding it.
enum WireMessage {
    /// `{"version": …, "value": …, "lastMutationID": …}`: StateLoopWire's `Versioned`.
    static func versioned(_ value: StoredValue, lastMutationID: UInt64?) -> String {
        var message = #"{"version":{"epoch":\#(value.version.epoch),"counter":\#(value.version.counter)},"value":"#
        message += String(decoding: value.json, as: UTF8.self)
        if let lastMutationID {
            message += #","lastMutationID":\#(lastMutationID)"#
        }
        message += "}"
        return message
    }

    /// `{"changed": true}`: StateLoopWire's `ChangeHint`.
    static let hint = #"{"changed":true}"#

    /// `{"version": …}`: StateLoopWire's `MutationReceipt`.
    static func receipt(_ version: Version) -> Data {
        Data(#"{"version":{"epoch":\#(version.epoch),"counter":\#(version.counter)}}"#.utf8)
    }

    /// The fixed error bodies, encoded once rather than on every answer.
    static let unauthorized = error(ErrorResponse.unauthorized.body)
    static let notFound = error("notFound", "no such resource")
    static let unavailable = error(ErrorResponse.unavailable.body)

    /// `{"error": …, "message": …}`: StateLoopWire's `ErrorBody`, its keys always in the same
    /// order, so that equal answers are equal bytes (a hidden key's 404 is the missing one's).
    static func error(_ code: String, _ message: String) -> Data {
        error(ErrorBody(error: code, message: message))
    }

    /// `body`, encoded as ``error(_:_:)`` encodes its parts.
    static func error(_ body: ErrorBody) -> Data {
        (try? KitJSON.encoder.encode(body)) ?? Data(#"{"error":"internal"}"#.utf8)
    }
}
