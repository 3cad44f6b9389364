import Foundation

/// Who sends a queue of mutations: the "client" whose mutations a server numbers in order.
///
/// StateLoopSync's `OptimisticResource` has one, sends its mutations one at a time in order under it, and
/// gives it to the transports (as the `Client-ID` header), so that the server can tell every
/// reader of a value the newest of *its* mutations that the value contains
/// (``Versioned/lastMutationID``).
public struct ClientID: Hashable, Codable, Sendable, CustomStringConvertible {
    /// The identifier as sent on the wire: letters, digits and `-`, at most 36 characters.
    public let rawValue: String

    /// A new, random identifier.
    public init() {
        rawValue = UUID().uuidString.lowercased()
    }

    /// An identifier from its wire form.
    public init(rawValue: String) {
        self.rawValue = rawValue
    }

    public var description: String {
        rawValue
    }
}

/// The client's identifier of a mutation, sent with it so that a server that honours it applies
/// a retried mutation only once.
///
/// The mutations an `OptimisticResource` makes are numbered: `<client>:<sequence>`, with the
/// sequence counting from 1 in the order they are made (and sent). A server that applies
/// `<client>:7` has processed every earlier mutation of that client, which is what
/// ``Versioned/lastMutationID`` relies on.
public struct MutationID: Hashable, Codable, Sendable, CustomStringConvertible {
    /// The identifier as sent on the wire.
    public let rawValue: String

    /// A new, unique identifier outside any client's order.
    public init() {
        rawValue = UUID().uuidString.lowercased()
    }

    /// The `sequence`th mutation of `client`.
    public init(client: ClientID, sequence: UInt64) {
        rawValue = "\(client.rawValue):\(sequence)"
    }

    /// An identifier from its wire form.
    public init(rawValue: String) {
        self.rawValue = rawValue
    }

    /// The client and the sequence number, for an identifier of the `<client>:<sequence>` form.
    public var parts: (client: ClientID, sequence: UInt64)? {
        guard let colon = rawValue.lastIndex(of: ":"), colon != rawValue.startIndex,
            let sequence = UInt64(rawValue[rawValue.index(after: colon)...])
        else { return nil }
        return (ClientID(rawValue: String(rawValue[..<colon])), sequence)
    }

    /// The sequence number, when the identifier is one of `client`'s.
    public func sequence(of client: ClientID) -> UInt64? {
        guard let parts, parts.client == client else { return nil }
        return parts.sequence
    }

    public var description: String {
        rawValue
    }
}
