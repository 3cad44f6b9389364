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

    /// `{"cookie": …, "replace": …, "rows": […], "removed": […], "lastMutationID": …}`:
    /// StateLoopWire's `RowsDifference`, each row's value its stored JSON.
    static func rows(
        cookie: CollectionCookie, replace: Bool, rows: [(id: String, version: Version, json: Data)], removed: [String], lastMutationID: UInt64?,
        next: String? = nil
    ) -> Data {
        var message = Data(#"{"cookie":"\#(cookie)","replace":\#(replace),"rows":["#.utf8)
        for (index, row) in rows.enumerated() {
            if index > 0 { message.append(UInt8(ascii: ",")) }
            message.append(contentsOf: #"{"id":"#.utf8)
            message.append(string(row.id))
            message.append(contentsOf: #","version":{"epoch":\#(row.version.epoch),"counter":\#(row.version.counter)},"value":"#.utf8)
            message.append(row.json)
            message.append(UInt8(ascii: "}"))
        }
        message.append(contentsOf: #"],"removed":["#.utf8)
        for (index, id) in removed.enumerated() {
            if index > 0 { message.append(UInt8(ascii: ",")) }
            message.append(string(id))
        }
        message.append(UInt8(ascii: "]"))
        if let lastMutationID {
            message.append(contentsOf: #","lastMutationID":\#(lastMutationID)"#.utf8)
        }
        if let next {
            message.append(contentsOf: #","next":"#.utf8)
            message.append(string(next))
        }
        message.append(UInt8(ascii: "}"))
        return message
    }

    /// `text` as a JSON string.
    private static func string(_ text: String) -> Data {
        Data(JSONBytes.quoted(text).utf8)
    }

    /// `{"changed": true}`: StateLoopWire's `ChangeHint`.
    static let hint = #"{"changed":true}"#

    /// `{"version": …}`: StateLoopWire's `MutationReceipt`.
    static func receipt(_ version: Version) -> Data {
        Data(#"{"version":{"epoch":\#(version.epoch),"counter":\#(version.counter)}}"#.utf8)
    }

    /// The version of a receipt (``receipt(_:)``), read back for a report.
    static func receiptVersion(_ body: Data) -> Version? {
        try? JSONDecoder().decode(MutationReceipt.self, from: body).version
    }

    /// An error body's code and message (`code: message`), read back for a report.
    static func errorText(_ body: Data) -> String? {
        (try? JSONDecoder().decode(ErrorBody.self, from: body)).map { "\($0.error): \($0.message)" }
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
