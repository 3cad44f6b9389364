/// The rows a client holds for one subscription to a collection's query, and the cookie they
/// stand at: what every answer and push of the subscription is applied to, under the protocol's
/// rules, so that the rows never go back to an older state and never mix two histories.
///
/// - A whole result (`replace`) is applied unless its cookie is older than the one held (an
///   answer overtaken by a later one): the rows become exactly its rows.
/// - A difference is applied only when it is relative to the cookie held: the caller says which
///   cookie its request was made with (for a socket's first message, the cookie the socket was
///   opened with; for a later one, the previous message's). Any other difference is refused with
///   ``Outcome/needsCatchUp``: the caller asks again from the cookie held.
///
/// A pure value: the caller owns it (a subscription's state in a `System`, say) and persists it
/// as it likes.
public struct CollectionRows<Row: Sendable>: Sendable {
    /// The rows, by id.
    public private(set) var rows: [String: VersionedRow<Row>] = [:]
    /// The cookie the rows stand at; `nil` before the first answer.
    public private(set) var cookie: String?

    /// Rows as held before any answer.
    public init() {}

    /// What applying an answer did.
    public enum Outcome: Sendable, Hashable {
        /// The rows and the cookie are the answer's now.
        case applied
        /// A whole result older than the rows held: dropped.
        case outdated
        /// A difference relative to another cookie than the one held: dropped. Ask again from
        /// ``CollectionRows/cookie``.
        case needsCatchUp
    }

    /// Applies `difference`, an answer to a request made with `requestCookie` (`nil`: none).
    @discardableResult
    public mutating func apply(_ difference: RowsDifference<Row>, requestedWith requestCookie: String?) -> Outcome {
        if difference.replace {
            if let held = cookie.flatMap(Position.init), let incoming = Position(difference.cookie), incoming < held {
                return .outdated
            }
            rows = Dictionary(difference.rows.map { ($0.id, $0) }, uniquingKeysWith: { _, later in later })
            cookie = difference.cookie
            return .applied
        }
        guard requestCookie == cookie, cookie != nil else { return .needsCatchUp }
        for id in difference.removed { rows[id] = nil }
        for row in difference.rows { rows[row.id] = row }
        cookie = difference.cookie
        return .applied
    }

    /// Forgets every row: the query refused the principal (404), or the subscription ended.
    public mutating func clear() {
        rows = [:]
        cookie = nil
    }

    /// Whether the cookie `a` stands before `b` in the server's history (of one query): an
    /// answer with `a` is older than rows held at `b`. Cookies not of the protocol's form
    /// order as nothing.
    package static func precedes(_ a: String, _ b: String) -> Bool {
        guard let a = Position(a), let b = Position(b) else { return false }
        return a < b
    }

    /// The epoch and position of a cookie of the protocol's form (`<epoch>.<position>.<query>`);
    /// `nil` for another form.
    package static func position(of cookie: String) -> (epoch: UInt64, position: UInt64)? {
        Position(cookie).map { ($0.epoch, $0.position) }
    }

    /// Where a cookie stands in the server's history: its epoch and position, which order
    /// cookies (`<epoch>.<position>.<query>`). A cookie of another form orders as nothing: a
    /// whole result with one is applied.
    private struct Position: Comparable {
        let epoch: UInt64
        let position: UInt64

        init?(_ cookie: String) {
            let parts = cookie.split(separator: ".")
            guard parts.count >= 2, let epoch = UInt64(parts[0]), let position = UInt64(parts[1]) else { return nil }
            self.epoch = epoch
            self.position = position
        }

        static func < (lhs: Position, rhs: Position) -> Bool {
            (lhs.epoch, lhs.position) < (rhs.epoch, rhs.position)
        }
    }
}

extension CollectionRows: Equatable where Row: Equatable {}
extension CollectionRows: Codable where Row: Codable {}
