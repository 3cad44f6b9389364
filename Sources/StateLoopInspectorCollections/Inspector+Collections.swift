import Foundation
import StateLoopCollections
import StateLoopInspector
import StateLoopInspectorWire

extension Inspector {
    /// Records what `collection` does, under `name`: each answer of a subscription, applied or
    /// set aside (an older whole result, `outdated`; a difference from a cookie not held,
    /// `needsCatchUp`), with the subscription's status, cookie and last outcome; the
    /// subscriptions' statuses as they change and the rows they drop; and each change's steps
    /// (queued, accepted, refused with the server's reason, confirmed once every
    /// subscription's rows contain it).
    ///
    /// An answer is recorded by its size and the ids of at most 20 rows it brings and 20 it
    /// removes, never by its rows' values: a first sync of 100,000 rows is one small record.
    /// A change is recorded as JSON, redacted like every event.
    ///
    /// Watching changes nothing the collection does: it reads what the collection tells once
    /// each write committed, and holds neither the collection nor the inspector. The watch
    /// ends when the inspector goes or when the app releases the collection.
    ///
    /// A module of its own, so that an app that inspects systems without collections does not
    /// link SQLite for it.
    ///
    /// - Parameters:
    ///   - collection: The collection watched.
    ///   - name: The name its records carry, as the inspector lists it.
    public func watch<Row, M>(_ collection: LocalCollection<Row, M>, named name: String) {
        // Subscribed now, so that nothing told after this call is missed; the task holds the
        // stream, not the collection.
        let activity = collection.activity()
        let (declared, client) = (collection.declaration.name, collection.clientID)
        let task = Task.detached { [weak self] in
            var tracker = CollectionTracker(name: name, collection: declared, client: client)
            for await event in activity {
                guard let self else { return }
                for record in tracker.records(for: event, redaction: redaction) { keep(record) }
            }
        }
        keepWatches([task])
    }
}
