import Foundation
import StateLoopWire

/// Where a collection's subscriber stands in the server's history: the store's epoch, a
/// position in its change feed, and the query its rows were selected by, written
/// `<epoch>.<position>.<query>` (the query as 16 hexadecimal digits of a digest). Cookies of one
/// query order by epoch, then position. Clients hold them as opaque text.
///
/// The query is in the cookie because a difference from the feed is only right for the query
/// the reader's rows were selected by: a query made otherwise since (a user who joined a project
/// now selects its tasks too, none of which changed) is answered whole.
struct CollectionCookie: Sendable, Hashable, CustomStringConvertible {
    var epoch: UInt64
    var position: UInt64
    var query: String

    init(epoch: UInt64, position: UInt64, query: String) {
        self.epoch = epoch
        self.position = position
        self.query = query
    }

    /// A cookie of `query` at `position`.
    init(epoch: UInt64, position: UInt64, of query: RowQuery) {
        self.init(epoch: epoch, position: position, query: Self.digest(of: query))
    }

    /// A cookie read back; `nil` for text that is not one.
    init?(_ text: String) {
        let parts = text.split(separator: ".", omittingEmptySubsequences: false)
        guard parts.count == 3, parts[0...1].allSatisfy({ $0.utf8.allSatisfy { (48...57).contains($0) } }),
            let epoch = UInt64(parts[0]), let position = UInt64(parts[1]), parts[2].utf8.count == 16,
            parts[2].utf8.allSatisfy({ (48...57).contains($0) || (97...102).contains($0) })
        else { return nil }
        self.init(epoch: epoch, position: position, query: String(parts[2]))
    }

    var description: String {
        "\(epoch).\(position).\(query)"
    }

    /// The query's part of a cookie: the first 16 hexadecimal digits of the SHA-256 of its JSON,
    /// keys sorted.
    static func digest(of query: RowQuery) -> String {
        let json = (try? KitJSON.encoder.encode(query)) ?? Data()
        return String(SHA256.hex(json).prefix(16))
    }
}
