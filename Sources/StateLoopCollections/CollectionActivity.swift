import Foundation
import StateLoopWire

/// One thing a local collection did, as an inspector shows it: an answer of a subscription
/// applied or set aside, a subscription's status, rows dropped, a change's steps.
///
/// Read through ``LocalCollection/activity()``: nothing is kept for a collection nobody watches.
package struct CollectionActivity: Sendable, Hashable {
    /// What happened.
    package enum Kind: Sendable, Hashable {
        /// An answer of the subscription (a fetch's, or a socket's message), and what the store
        /// made of it: `applied`, `outdated` (an older whole result, dropped), `needsCatchUp`
        /// (relative to a cookie not held: the subscription opens its socket again).
        case answer(replace: Bool, cookie: String, rows: [String], removed: [String], lastMutationID: UInt64?, outcome: String)
        /// The subscription's status changed.
        case status(RowSubscription.Status)
        /// The subscription's rows left the device (those no other subscription holds): the query
        /// refused the reader, or the app ended the subscription.
        case dropped(refused: Bool)
        /// The app made a change: stored, shown, queued as `sequence`.
        case queued(sequence: UInt64, mutation: Data)
        /// The server accepted the change `sequence`.
        case accepted(sequence: UInt64)
        /// The server refused the change `sequence`: taken off the rows shown.
        case refused(sequence: UInt64, message: String)
        /// Every subscription's rows contain these changes: they left the overlay.
        case contained(sequences: [UInt64])
    }

    /// The subscription's key, for what concerns one subscription.
    package var subscription: String?
    /// What happened.
    package var kind: Kind

    package init(subscription: String? = nil, _ kind: Kind) {
        self.subscription = subscription
        self.kind = kind
    }
}

extension LocalCollection {
    /// The client the collection's changes are sent as: with a change's sequence, the
    /// `MutationID` the server sees (`MutationID(client:sequence:)`), for an inspector.
    package var clientID: ClientID {
        store.clientID
    }
}
