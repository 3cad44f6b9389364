import StateLoopSync

/// The scenario's own server: the list, the mutations it applied (by id: applied once), the
/// devices' sessions and each client's push channel.
actor ListServer {
    private(set) var list: [String] = []
    private var version = Version(counter: 1)
    private var applied: [String: Version] = [:]
    /// The last sequence applied per client: its `lastMutationID`.
    private var lastApplied: [String: UInt64] = [:]
    private var deliveries: [(client: ClientID, device: Int, delivery: AsyncStream<PushMessage<[String]>>.Continuation)] = []
    /// The devices whose session expired and that have not signed in since.
    private var expired: Set<Int> = []

    func expire(_ device: Int) {
        expired.insert(device)
    }

    func signIn(_ device: Int) {
        expired.remove(device)
    }

    private func checkSession(of device: Int) throws(HTTPStatusError) {
        if expired.contains(device) { throw HTTPStatusError(status: 401) }
    }

    func subscribe(_ client: ClientID, on device: Int, _ delivery: AsyncStream<PushMessage<[String]>>.Continuation) {
        deliveries.append((client, device, delivery))
    }

    func unsubscribe(_ client: ClientID) {
        deliveries.removeAll { $0.client == client }
    }

    /// The list as `client` reads it, with the last of its mutations applied.
    func value(for client: ClientID) -> Versioned<[String]> {
        Versioned(list, version: version, lastMutationID: lastApplied[client.rawValue])
    }

    /// The list as `client` reads it on `device`, whose session must hold.
    func value(for client: ClientID, on device: Int) throws(HTTPStatusError) -> Versioned<[String]> {
        try checkSession(of: device)
        return value(for: client)
    }

    /// Applies `append` unless `id` was applied already: the version it was applied at, and
    /// the pushes to send (none for a repeat).
    func apply(_ append: Append, id: MutationID, on device: Int) throws(HTTPStatusError) -> (Version, [ListPush]) {
        try checkSession(of: device)
        if let known = applied[id.rawValue] { return (known, []) }
        append.apply(to: &list)
        version = Version(counter: version.counter + 1)
        applied[id.rawValue] = version
        // Under the client that numbered it, as the kit keeps it: a mutation a killed launch
        // queued counts for that launch's client, whichever launch sent it.
        if let (sender, sequence) = id.parts { lastApplied[sender.rawValue] = sequence }
        let readers = deliveries.filter { !expired.contains($0.device) }
        return (version, readers.map { ($0.delivery, .value(value(for: $0.client))) })
    }

    func finish() {
        for (_, _, delivery) in deliveries { delivery.finish() }
    }
}
