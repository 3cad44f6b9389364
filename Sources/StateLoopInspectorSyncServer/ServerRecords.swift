import Foundation
import StateLoopInspector
import StateLoopInspectorWire
import StateLoopServer
import StateLoopWire

/// The record of each kind of a server's activity: its kind now, its fields when it is
/// encoded (off the thread that did the work).
enum ServerRecords {
    /// How many keys a commit record lists (as a push record lists values,
    /// `ServerActivity.PushReport.listedValues`): a server-side change of a thousand values
    /// costs the inspector twenty, and the rest are counted.
    static let listed = 20

    static func record(of activity: ServerActivity) -> (InspectorRecord.Kind, @Sendable (inout InspectorRecord, Redaction) -> Void) {
        switch activity {
        case .request(let report):
            return (
                .request,
                { record, redaction in
                    record.route = report.route
                    record.httpStatus = report.status
                    record.duration = report.duration.inSeconds
                    record.mutation = report.mutation
                    record.client = report.client
                    record.principalID = report.found.principalID
                    record.principal = report.found.principal.map { Inspector.reflected($0, redaction: redaction) }
                    record.key = report.found.key?.description
                    record.version = report.found.version?.description
                }
            )
        case .mutation(let report):
            return (
                .mutation,
                { record, redaction in
                    record.mutation = report.id.rawValue
                    record.principalID = report.scope
                    record.route = report.path
                    // The body as the client sent it, redacted like every event: what the
                    // handler was given.
                    record.event = report.body.map { body in
                        redaction.apply(
                            to: (try? JSONDecoder().decode(JSONValue.self, from: body)) ?? .object(["notJSON": .string("\(body.count) bytes")]))
                    }
                    record.outcome = report.outcome.rawValue
                    record.httpStatus = report.status
                    record.version = report.version?.description
                    record.reason = report.refusal
                }
            )
        case .commit(let changes):
            // Only what the record shows is kept: the buffer holds records long after they
            // were sent, and a commit's values (their JSON) would stay with them.
            let values = changes.values.prefix(listed).map { ($0.key, $0.version, false) }
            let rows = changes.rows.prefix(listed - values.count).map { ($0.key, $0.version, $0.after == nil) }
            let (cause, total) = (changes.cause, changes.values.count + changes.rows.count)
            return (
                .commit,
                { record, _ in
                    record.mutation = cause?.mutation.rawValue
                    record.principalID = cause?.scope
                    record.changes = (values + rows).map { key, version, deleted in
                        InspectorRecord.Change(key: key.description, version: version.description, deleted: deleted ? true : nil)
                    }
                    if total > listed { record.count = total }
                }
            )
        case .pushes(let reports, let values):
            return (
                .push,
                { record, _ in
                    if values > reports.count { record.count = values }
                    record.pushes = reports.map { report in
                        InspectorRecord.Push(
                            key: report.key.description, version: report.version.description, queued: report.queued.sorted(),
                            queuedCount: report.queuedCount, coalesced: report.coalesced.isEmpty ? nil : report.coalesced.sorted(),
                            dropped: report.dropped.isEmpty ? nil : report.dropped.sorted())
                    }
                }
            )
        case .socketOpened(let socket, let key, let scope, let client):
            return (
                .socket,
                { record, _ in
                    record.socket = socket
                    record.key = key.description
                    record.principalID = scope
                    record.client = client?.rawValue
                    record.outcome = "opened"
                }
            )
        case .socketClosed(let socket, let key, let ending):
            return (
                .socket,
                { record, _ in
                    record.socket = socket
                    record.key = key.description
                    record.outcome = "closed"
                    record.reason = ending ?? "the client left"
                }
            )
        case .sessionsEnded(let scope):
            return (
                .session,
                { record, _ in
                    record.principalID = scope
                    record.outcome = "ended"
                }
            )
        }
    }
}
