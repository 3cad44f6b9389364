import Foundation
import StateLoopInspector
import StateLoopInspectorWire
import StateLoopServer
import StateLoopWire

/// The record of each kind of a server's activity: its kind now, its fields when it is
/// encoded (off the thread that did the work).
enum ServerRecords {
    /// How many sockets a push record names; the rest are counted.
    static let namedSockets = 20

    static func record(of activity: ServerActivity) -> (InspectorRecord.Kind, @Sendable (inout InspectorRecord, Redaction) -> Void) {
        switch activity {
        case .request(let report):
            return (
                .request,
                { record, redaction in
                    record.route = report.route
                    record.httpStatus = report.status
                    record.duration = seconds(report.duration)
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
                { record, _ in
                    record.mutation = report.id.rawValue
                    record.principalID = report.scope
                    record.outcome = report.outcome.rawValue
                    record.httpStatus = report.status
                    record.version = report.version?.description
                    record.reason = report.refusal
                }
            )
        case .commit(let changes):
            return (
                .commit,
                { record, _ in
                    record.mutation = changes.cause?.mutation.rawValue
                    record.principalID = changes.cause?.scope
                    record.changes =
                        changes.values.map { InspectorRecord.Change(key: $0.key.description, version: $0.version.description) }
                        + changes.rows.map {
                            InspectorRecord.Change(key: $0.key.description, version: $0.version.description, deleted: $0.after == nil ? true : nil)
                        }
                }
            )
        case .pushes(let report):
            return (
                .push,
                { record, _ in
                    record.key = report.key.description
                    record.version = report.version.description
                    // The outcome that most sockets had names the record; the others are counted
                    // in its reason, so that one record stands for one value's fan-out.
                    let groups = [("queued", report.queued), ("coalesced", report.coalesced), ("dropped", report.dropped)]
                    let main = groups.max { $0.1.count < $1.1.count } ?? ("queued", [])
                    record.outcome = main.0
                    record.count = main.1.count
                    record.sockets = Array(main.1.sorted().prefix(namedSockets))
                    let others = groups.filter { $0.0 != main.0 && !$0.1.isEmpty }
                    if !others.isEmpty {
                        record.reason = others.map { "\($0.0) on \($0.1.count): \(named($0.1))" }.joined(separator: "; ")
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

    /// The first sockets of `sockets`, as a list.
    private static func named(_ sockets: [Int]) -> String {
        sockets.sorted().prefix(namedSockets).map(String.init).joined(separator: ", ")
    }

    private static func seconds(_ duration: Duration) -> Double {
        Double(duration.components.seconds) + Double(duration.components.attoseconds) / 1e18
    }
}
