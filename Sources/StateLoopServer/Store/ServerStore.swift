import Foundation
import StateLoopWire

/// Where a ``SyncServer`` keeps what it owns: versioned values, the answers to mutation ids,
/// and each client's processed mutations. ``SQLiteStore`` is the embedded default.
///
/// A store guarantees, for every implementation:
/// - **One transaction per change.** ``write(_:)`` runs its body in one transaction: the values
///   it writes, the versions it allocates for them, the answers it remembers and the clients'
///   progress commit together or not at all.
/// - **Versions allocated in the change's transaction.** Each key has its own counter, raised
///   by one by every write of the key; the epoch is stored with the data and changes only when
///   the data's history restarts (a restore from a backup), never on a restart of the process.
/// - **A change feed in commit order.** Every commit that changed something is handed to the
///   observers registered with ``observeCommits(_:)``, one commit at a time, in commit order;
///   and every value written is kept, in the same transaction, in a durable feed that
///   ``changes(after:limit:)`` reads (by another process too), until
///   ``forgetChanges(committedBefore:)`` prunes it.
///
/// The transaction body is synchronous on purpose: it runs while the store holds its write
/// lock, so it cannot wait on a network call or another transaction.
public protocol ServerStore: Sendable {
    /// The epoch of every version this store allocates.
    var epoch: UInt64 { get }

    /// The new epoch the store began as it opened because its data's history went back (a
    /// restored backup), with the reason; `nil` when it kept the data's epoch. Stores that
    /// cannot tell return `nil` (the default).
    var epochRestart: EpochRestart? { get }

    /// Runs `body` in one transaction and commits it; throws, with nothing committed, if `body`
    /// or the commit throws. Commit observers are called before it returns.
    func write<Result: Sendable>(_ body: @Sendable (any StoreTransaction) throws -> Result) async throws -> Result

    /// Runs `body` on one consistent, read-only view of the store, beside writes rather than
    /// after them; any write in it throws.
    func read<Result: Sendable>(_ body: @Sendable (any StoreTransaction) throws -> Result) async throws -> Result

    /// Reads `key`'s value and, in the same consistent view, the `lastMutationID` of `client`
    /// under `scope`: the number never names a mutation the value does not contain.
    func read(_ key: ResourceKey, lastMutationIDOf client: ClientID?, scope: String) async throws -> (value: StoredValue?, lastMutationID: UInt64?)

    /// Forgets the progress and remembered answers of every client that processed no mutation
    /// since `cutoff`; returns how many clients were forgotten. Client ids are chosen by
    /// clients, often one per launch, so without this they would pile up for ever. A client
    /// forgotten while it still had a mutation in flight whose answer was lost would have it
    /// applied again when it retries: choose a cutoff far beyond any client's offline time.
    func forgetClients(idleSince cutoff: Date) async throws -> Int

    /// Calls `observer` with the changes of every later commit, in commit order; observers of
    /// one commit are called in the order they were added (a ``SyncServer`` adds its own when
    /// it is made: add one before it to hear of a commit before any push of it leaves).
    func observeCommits(_ observer: @escaping @Sendable (CommittedChanges) -> Void)

    /// Up to `limit` entries of the change feed after the position `sequence` (0 for the
    /// start), in feed order.
    func changes(after sequence: UInt64, limit: Int) async throws -> [StoredChange]

    /// Forgets the feed's entries committed before `cutoff`, except the newest commit's, which
    /// stay whole however old (a reader never sees part of a commit, and positions only rise);
    /// returns how many. Values, versions and answers are not touched: the feed is history, not
    /// state.
    func forgetChanges(committedBefore cutoff: Date) async throws -> Int

    /// Prepares the store to answer queries of `collection` that filter on, then sort by,
    /// `fields` (in that order): an index, for a store that keeps collections. The kit calls it
    /// once per declared query before its first answer.
    func prepareRows(of collection: String, indexedBy fields: [String]) async throws
}

extension ServerStore {
    /// Nothing to prepare: a store that keeps no collections refuses their reads anyway.
    public func prepareRows(of collection: String, indexedBy fields: [String]) async throws {}

    /// `nil`: a store that does not check its history at open never restarts its epoch by
    /// itself.
    public var epochRestart: EpochRestart? { nil }
}

extension StoreTransaction {
    /// Reads the key, then writes it only if its stored bytes differ: right for any store whose
    /// write transaction keeps what it read from changing under it until the commit (the
    /// stores' first guarantee), at the cost of a read.
    public func writeIfChanged(_ json: Data, to key: ResourceKey) throws -> Version? {
        if let stored = try value(of: key), stored.json == json { return nil }
        return try write(json, to: key)
    }
}

/// The operations of one store transaction. Only valid inside the body of
/// ``ServerStore/write(_:)``.
public protocol StoreTransaction: AnyObject {
    /// The store's epoch.
    var epoch: UInt64 { get }
    /// The mutation this transaction applies, recorded with each value it writes in the change
    /// feed; set by the kit before a mutation's handler runs, `nil` otherwise.
    var cause: ChangeCause? { get set }
    /// The value of `key`, as this transaction sees it.
    func value(of key: ResourceKey) throws -> StoredValue?
    /// Up to `limit` values of `resource` whose ids start with `prefix`, in the order of their
    /// ids (descending when `descending`), after the id `cursor` in that order when given: the
    /// rows of a paged list (a user's past rides as `ann/000042`, say).
    func values(of resource: String, prefix: String, after cursor: String?, limit: Int, descending: Bool) throws -> [StoredValue]
    /// Writes `json` as `key`'s value and returns the version allocated for it: the key's
    /// counter raised by one, in the store's epoch.
    func write(_ json: Data, to key: ResourceKey) throws -> Version
    /// Writes `json` as `key`'s value unless the key already holds exactly these bytes; returns
    /// the version allocated, or `nil` when the key was left as it was: then no counter is
    /// raised, no change-feed entry is kept and the commit's observers hear of no value for it
    /// (a commit may still carry the clients' progress). A key with no value is always written.
    ///
    /// The comparison is of bytes, not of meaning: the kit encodes values with sorted keys so
    /// that equal values make equal bytes. A store may answer it in one statement; the default
    /// reads the key first.
    func writeIfChanged(_ json: Data, to key: ResourceKey) throws -> Version?
    /// The answer remembered for the mutation id `mutation` of principal `scope`.
    func answer(to mutation: String, scope: String) throws -> RememberedAnswer?
    /// Remembers the answer to `mutation`; `client` and `sequence` when the id is a client's
    /// numbered mutation, so that the answer is forgotten once that client moves past it.
    func remember(_ answer: RememberedAnswer, to mutation: String, scope: String, client: ClientID?, sequence: UInt64?) throws
    /// The newest processed sequence number of `client` under `scope`.
    func lastMutationID(of client: ClientID, scope: String) throws -> UInt64?
    /// Records `sequence` as `client`'s newest processed mutation and forgets the answers to
    /// its earlier ones: a client sends its mutations in order, each until answered, so once
    /// it sends `sequence` it has every earlier answer.
    func setLastMutationID(_ sequence: UInt64, of client: ClientID, scope: String) throws

    // MARK: Collections (a store that keeps none throws ``CollectionsUnsupported``)

    /// The row `key` (its collection and id) as this transaction sees it; `nil` if it was
    /// never written or was deleted.
    func row(of key: ResourceKey) throws -> StoredRow?
    /// Writes the row `key` as `json` with its declared `fields`, or deletes it when `json` is
    /// `nil`; returns the version allocated, or `nil` when nothing changed (the same bytes, or
    /// the deletion of a row that does not exist). Each write that changes the row raises its
    /// counter, a deletion too, and is kept in the collections' change feed with the row's
    /// fields before and after.
    func writeRow(_ json: Data?, fields: [String: FieldValue], to key: ResourceKey) throws -> Version?
    /// The rows of `collection` that `query` selects, in its order, at most its limit.
    func rows(of collection: String, matching query: RowQuery) throws -> [StoredRow]
    /// Up to `limit` of the rows of `collection` that `query`'s conditions select (its order
    /// and limit aside), in the order of their ids' bytes, after the id `id` when given: a
    /// query's whole result read page by page, each page in a transaction of its own.
    func rows(of collection: String, matching query: RowQuery, after id: String?, limit: Int) throws -> [StoredRow]
    /// Up to `limit` entries of the collections' change feed for `collection` after
    /// `position`, in feed order.
    func rowChanges(of collection: String, after position: UInt64, limit: Int) throws -> [RowChange]
    /// The newest position of the collections' change feed and the newest it has forgotten.
    func rowFeedBounds() throws -> RowFeedBounds
    /// Keeps every other transaction from committing changes until this one ends, and waits
    /// for those committing now: what this transaction reads next is the newest, and every
    /// later commit follows it. A collection's push socket reads its first answer and registers
    /// after it, so that no commit falls between. A store whose write transactions already
    /// exclude each other (``SQLiteStore``) does nothing.
    func holdCommits() throws
}
