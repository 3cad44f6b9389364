import Foundation

/// What a server answers a subscription to a collection's query with, and pushes after each
/// commit that changed its result: the rows that entered or changed, the ids that left, and a
/// cookie to resume from.
///
/// On the wire:
///
/// ```json
/// {"cookie": "1764201600000.42.9f86d081884c7d65", "replace": false,
///  "rows": [{"id": "t1", "version": {"epoch": 1764201600000, "counter": 3}, "value": {…}}],
///  "removed": ["t7"], "lastMutationID": 12}
/// ```
///
/// With `replace`, `rows` is the query's whole result and every row the client held for the
/// subscription but not listed is gone; without it, the rows listed replace the client's copies
/// (or are new) and the ids of `removed` leave the subscription. The cookie is
/// `<epoch>.<position>.<query>`; cookies of one query order by epoch then position: send it back
/// as it came, and never apply an answer older than the one held. `lastMutationID` is the
/// reader's, as on a value. A whole result asked for by pages comes as `replace` answers with
/// `next` until the last. The article "The sync protocol" says when a server answers with a
/// difference, when whole, and how pages end.
public struct RowsDifference<Row: Sendable>: Sendable {
    /// Where the server's history stood when it answered: the position to resume from.
    public var cookie: String
    /// Whether ``rows`` is the whole result, replacing what the client held.
    public var replace: Bool
    /// The rows that entered or changed (the whole result when ``replace``), in the query's
    /// order when the result was read whole, in the order of their ids on a page (``next``).
    public var rows: [VersionedRow<Row>] {
        // The kept bytes follow the rows as decoded, place by place: rows changed, filtered or
        // reordered by the app would store one row's JSON under another's id.
        didSet { encoded = nil }
    }
    /// The ids of rows that left the result: deleted, changed so that they no longer match, or
    /// no longer readable by the client's principal.
    public var removed: [String]
    /// The newest mutation of the reader's client the server has processed, as on a value.
    public var lastMutationID: UInt64?
    /// Set on a page of a whole result that more pages follow: ask for the next with
    /// `after=<next>`. A whole result asked for by pages (`after`) comes in the order of the
    /// rows' ids, each page with ``replace``; the result is whole once a page comes without it.
    public var next: String?
    /// The rows' values as the server sent them, when read by ``decode(message:)``: a store
    /// keeps these bytes rather than encoding the rows again. Not part of the value: left out of
    /// `==` and of its JSON.
    package var encoded: EncodedRows?

    private enum CodingKeys: String, CodingKey {
        case cookie, replace, rows, removed, lastMutationID, next
    }

    /// A difference from its parts.
    public init(
        cookie: String, replace: Bool, rows: [VersionedRow<Row>], removed: [String], lastMutationID: UInt64? = nil, next: String? = nil
    ) {
        self.cookie = cookie
        self.replace = replace
        self.rows = rows
        self.removed = removed
        self.lastMutationID = lastMutationID
        self.next = next
    }
}

extension RowsDifference: Codable where Row: Codable {}

extension RowsDifference: Equatable where Row: Equatable {
    public static func == (a: Self, b: Self) -> Bool {
        a.cookie == b.cookie && a.replace == b.replace && a.rows == b.rows && a.removed == b.removed && a.lastMutationID == b.lastMutationID
            && a.next == b.next
    }
}

extension RowsDifference where Row: Codable {
    /// A difference read from a server's message, keeping each row's value as the server sent it
    /// (``encoded``).
    ///
    /// The envelope (cookie, ids, versions, removals) is read by hand and the values by
    /// `JSONDecoder` in passes of ``valuesPerPass``, rather than one generic decoding of every
    /// row's envelope: a first sync of 100,000 rows spent most of its decoding there. Passes of
    /// a bounded size keep the decoder's copy of what it reads small, where one pass over every
    /// value held a second copy of the message and the decoder's map of all of it at once. A
    /// message of another shape is decoded by `JSONDecoder` whole, with the same result.
    package static func decode(message: Data) throws -> RowsDifference<Row> {
        if let read = message.withUnsafeBytes({ bytes in Envelope(bytes) }) {
            let decoder = JSONDecoder()
            var rows: [Row] = []
            rows.reserveCapacity(read.values.count)
            var values = Data()
            for start in stride(from: 0, to: read.values.count, by: valuesPerPass) {
                values.removeAll(keepingCapacity: true)
                values.append(UInt8(ascii: "["))
                for index in start..<min(start + valuesPerPass, read.values.count) {
                    if index > start { values.append(UInt8(ascii: ",")) }
                    let range = read.values[index]
                    values.append(message[message.startIndex + range.lowerBound..<message.startIndex + range.upperBound])
                }
                values.append(UInt8(ascii: "]"))
                rows += try decoder.decode([Row].self, from: values)
            }
            if rows.count == read.ids.count {
                var difference = RowsDifference(
                    cookie: read.cookie, replace: read.replace,
                    rows: zip(zip(read.ids, read.versions), rows).map { VersionedRow(id: $0.0, version: $0.1, value: $1) },
                    removed: read.removed, lastMutationID: read.lastMutationID, next: read.next)
                difference.encoded = EncodedRows(message: message, ranges: read.values)
                return difference
            }
        }
        return try JSONDecoder().decode(RowsDifference<Row>.self, from: message)
    }
}

extension RowsDifference {
    /// How many values ``decode(message:)`` hands `JSONDecoder` at once.
    package static var valuesPerPass: Int { 1_024 }
}

/// The rows' values of a message as the server sent them: ranges of its bytes.
package final class EncodedRows: Sendable {
    private let message: Data
    private let ranges: [Range<Int>]

    init(message: Data, ranges: [Range<Int>]) {
        self.message = message
        self.ranges = ranges
    }

    /// The value of row `index`, as sent.
    package subscript(index: Int) -> Data {
        message[message.startIndex + ranges[index].lowerBound..<message.startIndex + ranges[index].upperBound]
    }
}

/// A message's envelope, read by hand; `nil` for any shape it does not expect.
private struct Envelope {
    var cookie = ""
    var replace = false
    var ids: [String] = []
    var versions: [Version] = []
    var values: [Range<Int>] = []
    var removed: [String] = []
    var lastMutationID: UInt64?
    var next: String?

    init?(_ bytes: UnsafeRawBufferPointer) {
        var reader = JSONBytes(bytes)
        // Each key once (JSONDecoder keeps a repeated key's first value: left to it), and every
        // key it requires present.
        var seen: Set<String> = []
        guard reader.take(UInt8(ascii: "{")) else { return nil }
        if !reader.take(UInt8(ascii: "}")) {
            repeat {
                guard let key = reader.string(), seen.insert(key).inserted, reader.take(UInt8(ascii: ":")) else { return nil }
                switch key {
                case "cookie":
                    guard let cookie = reader.string() else { return nil }
                    self.cookie = cookie
                case "replace":
                    if reader.word("true") {
                        replace = true
                    } else if !reader.word("false") {
                        return nil
                    }
                case "rows":
                    guard reader.take(UInt8(ascii: "[")) else { return nil }
                    if !reader.take(UInt8(ascii: "]")) {
                        repeat {
                            guard readRow(&reader) else { return nil }
                        } while reader.take(UInt8(ascii: ","))
                        guard reader.take(UInt8(ascii: "]")) else { return nil }
                    }
                case "removed":
                    guard reader.take(UInt8(ascii: "[")) else { return nil }
                    if !reader.take(UInt8(ascii: "]")) {
                        repeat {
                            guard let id = reader.string() else { return nil }
                            removed.append(id)
                        } while reader.take(UInt8(ascii: ","))
                        guard reader.take(UInt8(ascii: "]")) else { return nil }
                    }
                case "lastMutationID":
                    if !reader.word("null") {
                        guard let literal = reader.numberLiteral(), let id = UInt64(literal) else { return nil }
                        lastMutationID = id
                    }
                case "next":
                    if !reader.word("null") {
                        guard let id = reader.string() else { return nil }
                        next = id
                    }
                default:
                    guard reader.skipValue() != nil else { return nil }
                }
            } while reader.take(UInt8(ascii: ","))
            guard reader.take(UInt8(ascii: "}")) else { return nil }
        }
        guard seen.isSuperset(of: ["cookie", "replace", "rows", "removed"]), reader.atEnd() else { return nil }
    }

    /// One row: its id, version and the range of its value.
    private mutating func readRow(_ reader: inout JSONBytes) -> Bool {
        guard reader.take(UInt8(ascii: "{")) else { return false }
        var id: String?
        var version: Version?
        var value: Range<Int>?
        var seen: Set<String> = []
        repeat {
            guard let key = reader.string(), seen.insert(key).inserted, reader.take(UInt8(ascii: ":")) else { return false }
            switch key {
            case "id":
                guard let read = reader.string() else { return false }
                id = read
            case "version":
                guard reader.take(UInt8(ascii: "{")) else { return false }
                var epoch: UInt64?
                var counter: UInt64?
                repeat {
                    guard let name = reader.string(), reader.take(UInt8(ascii: ":")), let literal = reader.numberLiteral(),
                        let number = UInt64(literal), (name == "epoch" ? epoch : counter) == nil
                    else { return false }
                    switch name {
                    case "epoch": epoch = number
                    case "counter": counter = number
                    default: return false
                    }
                } while reader.take(UInt8(ascii: ","))
                guard reader.take(UInt8(ascii: "}")), let epoch, let counter else { return false }
                version = Version(epoch: epoch, counter: counter)
            case "value":
                guard let range = reader.skipValue() else { return false }
                value = range
            default:
                guard reader.skipValue() != nil else { return false }
            }
        } while reader.take(UInt8(ascii: ","))
        guard reader.take(UInt8(ascii: "}")), let id, let version, let value else { return false }
        ids.append(id)
        versions.append(version)
        values.append(value)
        return true
    }
}

/// A row of a collection with its id and the version the server allocated for it.
public struct VersionedRow<Row: Sendable>: Sendable {
    /// The row's primary key.
    public var id: String
    /// The row's version: every row has its own counter, as every value has.
    public var version: Version
    /// The row.
    public var value: Row

    /// A row from its parts.
    public init(id: String, version: Version, value: Row) {
        self.id = id
        self.version = version
        self.value = value
    }
}

extension VersionedRow: Codable where Row: Codable {}
extension VersionedRow: Equatable where Row: Equatable {}
extension VersionedRow: Hashable where Row: Hashable {}
