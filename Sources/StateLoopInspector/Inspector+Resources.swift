import StateLoopInspectorWire
import StateLoopSync

extension Inspector {
    /// Records what `resource` does, under `name`: each status it publishes and each version it
    /// drops as outdated. Watching does not count as subscribing: the resource fetches and
    /// pushes exactly as it would without the inspector. Ends when the resource stops.
    public func watch<Value: Sendable>(_ resource: RemoteResource<Value>, named name: String) {
        // Subscribed now, so that nothing published after this call is missed; the task holds
        // the stream, not the resource, which stops when the app releases it (ending the watch).
        let observations = resource.observe()
        let task = Task.detached { [weak self] in
            for await observation in observations {
                guard let self else { return }
                switch observation {
                case .status(let status): keepStatus(of: name, Self.statusJSON(status))
                case .dropped(let version): keepDrop(of: name, version)
                }
            }
        }
        keepWatch(task)
    }

    /// Records what the optimistic `resource` does, under `name`: each status it publishes with
    /// its pending mutations, each mutation's steps (queued, sent, accepted, confirmed or
    /// refused) and each version its remote resource drops as outdated. Watching changes
    /// nothing the resource does, and takes no failure from the app's subscribers. Ends when
    /// the resource stops.
    public func watch<M: Mutation>(_ resource: OptimisticResource<M>, named name: String) {
        let observations = resource.observe()
        let drops = resource.resource.observe()
        // Named in its statuses: a server's push socket names the client it pushes to, which is
        // how the page finds the value a push brought on this app's timeline.
        let client = resource.clientID.rawValue
        let statuses = Task.detached { [weak self] in
            var tracker = MutationTracker<M>()
            for await observation in observations {
                guard let self else { return }
                switch observation {
                case .refused(let failures):
                    for step in tracker.note(failures) { keepStep(of: name, step) }
                case .discarded(let ids):
                    tracker.noteDiscarded(ids)
                case .status(let status):
                    keepStatus(of: name, Self.statusJSON(status.resource, pending: status.mutations.map(pendingJSON)), client: client)
                    for step in tracker.steps(to: status) { keepStep(of: name, step) }
                }
            }
        }
        let dropsTask = Task.detached { [weak self] in
            for await case .dropped(let version) in drops {
                guard let self else { return }
                keepDrop(of: name, version)
            }
        }
        keepWatch(statuses)
        keepWatch(dropsTask)
    }

    // MARK: Records

    private func keepStatus(of name: String, _ status: JSONValue, client: String? = nil) {
        var record = InspectorRecord(sequence: 0, time: 0, system: name, kind: .resource)
        record.resource = name
        record.client = client
        record.status = redaction.apply(to: status)
        keep(record)
    }

    private func keepDrop(of name: String, _ version: Version) {
        var record = InspectorRecord(sequence: 0, time: 0, system: name, kind: .versionDropped)
        record.resource = name
        record.version = version.description
        keep(record)
    }

    private func keepStep<M: Mutation>(of name: String, _ step: MutationTracker<M>.Step) {
        var record = InspectorRecord(sequence: 0, time: 0, system: name, kind: .mutation)
        record.resource = name
        record.mutation = step.id.rawValue
        record.outcome = step.outcome
        record.version = step.version?.description
        record.event = step.mutation.map { redaction.apply(to: RecordEncoder.json(of: $0)) }
        record.reason = step.reason
        keep(record)
    }

    private func pendingJSON<M: Mutation>(_ pending: PendingMutation<M>) -> JSONValue {
        let status: String =
            switch pending.status {
            case .pending: "pending"
            case .sent: "sent"
            case .confirmed(let version): "accepted at \(version)"
            case .expired: "could not send"
            }
        return .object(["id": .string(pending.id.rawValue), "status": .string(status), "mutation": RecordEncoder.json(of: pending.mutation)])
    }

    /// A resource's status as the page shows it (see <doc:LiveInspection>).
    static func statusJSON<Value>(_ status: ResourceStatus<Value>, pending: [JSONValue]? = nil) -> JSONValue {
        var fields: [String: JSONValue] = [
            "version": status.value.map { .string($0.version.description) } ?? .null,
            "loading": .bool(status.isLoading),
            "slow": .bool(status.isSlow),
            "offline": .bool(status.isOffline),
            "retrying": .bool(status.isRetrying),
            "unauthorized": .bool(status.isUnauthorized),
            "failure": status.failure.map { .string($0.message) } ?? .null,
            "pushFailure": status.pushFailure.map { .string($0.message) } ?? .null,
        ]
        if let pending { fields["pending"] = .array(pending) }
        return .object(fields)
    }
}
