import Foundation

/// The answer a server gave to a mutation id, kept so that a retry of the same id gets it
/// again without running the mutation twice.
public struct RememberedAnswer: Sendable, Hashable {
    /// What the mutation asked for (its route and body, digested): a retry must ask for the
    /// same, or it is not a retry.
    public var fingerprint: UInt64
    /// The HTTP status of the answer.
    public var status: Int
    /// The answer's JSON body.
    public var body: Data

    /// An answer from its parts.
    public init(fingerprint: UInt64, status: Int, body: Data) {
        self.fingerprint = fingerprint
        self.status = status
        self.body = body
    }
}
