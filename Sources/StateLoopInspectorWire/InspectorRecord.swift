/// One thing an inspected system did, as a session keeps it: an event reduced with the state it
/// produced, an event discarded, an effect started, cancelled or finished, or records dropped
/// because the inspector could not keep up. A watched server's records (StateLoopInspectorSyncServer)
/// are kept the same way: its requests, mutations, commits, pushes, sockets and sessions.
public struct InspectorRecord: Codable, Sendable, Hashable {
    /// What happened.
    public enum Kind: String, Codable, Sendable {
        /// The system was attached: `state` is the state it had then.
        case attached
        /// `event` was reduced (`source`: `sent` or `effect`) into `state`.
        case reduced
        /// `event` was not reduced (`reason`: `stale` or `stopped`).
        case discarded
        /// `effect` started, for `request` when a query's answer describes it.
        case effectStarted
        /// `effect` was cancelled: its later events are discarded as stale.
        case effectCancelled
        /// `effect`'s work returned.
        case effectFinished
        /// `dropped` records before this one were lost: the buffer was full.
        case dropped
        /// A watched `resource` published `status`; or a `subscription` of a watched
        /// `collection` stands at `status`, after the answer `event` (its `outcome`) when it
        /// took one.
        case resource
        /// A pending `mutation` of an optimistic `resource`, or a change to a watched
        /// `collection`'s rows, reached `outcome` (`queued`, `sent`, `accepted`, `confirmed`,
        /// `refused`); `event` is the mutation.
        case mutation
        /// A watched `resource` dropped a value of `version`, no newer than the one it held.
        case versionDropped
        /// A watched journal's `status`: what opening it found, then its health (see
        /// StateLoopInspector's article “The inspector”).
        case journal
        /// A watched server answered a request on `route` with `httpStatus`, after `duration`
        /// seconds: from `principal` (`principalID`), for `mutation` or reading `key` at
        /// `version`, as far as the routes found out.
        case request
        /// A watched server's transaction committed `changes`; `mutation` is the mutation it
        /// applied (of `principalID`), `nil` for a server-side change.
        case commit
        /// A watched server's fan-out of one commit: `pushes`, one per value with the sockets
        /// it was queued to, coalesced for (a slow reader's waiting value replaced) or dropped by.
        case push
        /// A watched server's push `socket` following `key` was `opened` (for `principalID` and
        /// `client`) or `closed` (`reason`: why the server closed it; none when the client left).
        case socket
        /// A watched server ended the sessions of `principalID` (of everyone, without one): their
        /// push sockets close.
        case session
    }

    /// The record's number in its session, from 1: a gap is never silent (see ``Kind/dropped``).
    public var sequence: UInt64
    /// Seconds since the session started.
    public var time: Double
    /// The system's name, as the app attached it.
    public var system: String
    public var kind: Kind
    /// The event, redacted.
    public var event: JSONValue?
    /// The state after the event (or when attached), redacted.
    public var state: JSONValue?
    /// The state's stored properties its `Codable` form leaves out (a search box's text kept
    /// out of the journal, say), read by reflection and redacted: shown and compared beside
    /// ``state``, never replayed (a test made from the session replays ``state``).
    public var unjournaled: JSONValue?
    /// `sent` or `effect`, for a reduced event.
    public var source: String?
    /// Where the app's code sent the event (`Module/File.swift:42`), for a reduced event sent
    /// with `System.send`.
    public var location: String?
    /// `stale` or `stopped`, for a discarded event.
    public var reason: String?
    /// The effect's number, for the effect records.
    public var effect: UInt64?
    /// The effect's request, in readable form.
    public var request: String?
    /// How many records were lost, for a ``Kind/dropped`` record.
    public var dropped: Int?
    /// The watched resource's name, for the resource kinds.
    public var resource: String?
    /// The resource's status (see StateLoopInspector's article “The inspector”), for a ``Kind/resource`` record.
    public var status: JSONValue?
    /// The mutation's id, for a ``Kind/mutation`` record.
    public var mutation: String?
    /// Where the mutation is, for a ``Kind/mutation`` record; what the store made of a
    /// collection's answer (`applied`, `outdated`, `needsCatchUp`), for a ``Kind/resource``
    /// record of a collection.
    public var outcome: String?
    /// A version, for a ``Kind/versionDropped`` record (and a mutation `accepted` at it).
    public var version: String?
    /// The watched collection's declared name, for its records (StateLoopInspectorCollections):
    /// its subscriptions' ``Kind/resource`` records and its changes' ``Kind/mutation`` records.
    public var collection: String?
    /// The subscription's key, for a collection's ``Kind/resource`` record.
    public var subscription: String?
    /// The method and route's pattern (`POST /rides/{id}`), for a ``Kind/request`` record; the
    /// method and path (`POST /rides/42`), for a server's ``Kind/mutation`` record (whose
    /// ``event`` is the body the client sent, redacted).
    public var route: String?
    /// The HTTP status answered, for a ``Kind/request`` record (and a server's
    /// ``Kind/mutation`` record).
    public var httpStatus: Int?
    /// How long the request took, in seconds, for a ``Kind/request`` record.
    public var duration: Double?
    /// Who sent the request, as the server's access policy returned it: reflected and redacted.
    public var principal: JSONValue?
    /// The principal's id on the server (its scope), for a server's records.
    public var principalID: String?
    /// The reading client's id (`Client-ID`), for a server's request and socket records.
    public var client: String?
    /// A server's resource key (`ride/annie`), for its request, push and socket records.
    public var key: String?
    /// The keys a commit wrote, each with its new version, for a ``Kind/commit`` record.
    public var changes: [Change]?
    /// What a commit's fan-out did with each value, for a ``Kind/push`` record.
    public var pushes: [Push]?
    /// How many keys a commit wrote, or values its fan-out pushed, when ``changes`` or
    /// ``pushes`` lists only the first of them (a server-side change of a thousand values is
    /// recorded by its first 20).
    public var count: Int?
    /// The push socket's number on its server, for a ``Kind/socket`` record.
    public var socket: Int?

    /// What a fan-out did with one value: the sockets it was queued to, those whose waiting
    /// value it replaced, and those that dropped it (they held a newer one, or were closing),
    /// each list the first 20 sockets of its count.
    public struct Push: Codable, Sendable, Hashable {
        /// The resource key (`ride/annie`).
        public var key: String
        /// The value's version (`v12`).
        public var version: String
        /// Sockets the value was queued to.
        public var queued: [Int]
        /// How many it was queued to.
        public var queuedCount: Int
        /// Sockets whose waiting value it replaced.
        public var coalesced: [Int]?
        /// Sockets that dropped it.
        public var dropped: [Int]?

        public init(key: String, version: String, queued: [Int], queuedCount: Int? = nil, coalesced: [Int]? = nil, dropped: [Int]? = nil) {
            self.key = key
            self.version = version
            self.queued = queued
            self.queuedCount = queuedCount ?? queued.count
            self.coalesced = coalesced
            self.dropped = dropped
        }
    }

    /// One key a commit wrote.
    public struct Change: Codable, Sendable, Hashable {
        /// The resource key (`ride/annie`), or a collection's row (`rides/42`).
        public var key: String
        /// The version it has now, as ``InspectorRecord/version`` writes one (`v12`).
        public var version: String
        /// Whether a row was deleted.
        public var deleted: Bool?

        public init(key: String, version: String, deleted: Bool? = nil) {
            self.key = key
            self.version = version
            self.deleted = deleted
        }
    }

    /// A record with only its common fields set.
    public init(sequence: UInt64, time: Double, system: String, kind: Kind) {
        self.sequence = sequence
        self.time = time
        self.system = system
        self.kind = kind
    }
}
