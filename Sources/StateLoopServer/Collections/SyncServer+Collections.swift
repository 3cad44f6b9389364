import Foundation
import Hummingbird
import StateLoopWire

/// Collections served by query: `GET <path>/<query>` answers a subscription with the rows the
/// query selects, or, from a cookie, with the difference since.
extension SyncServer {
    /// The most feed entries a catch-up reads: a subscriber further behind gets the whole result,
    /// which is then no dearer than the history.
    static var maximumCatchUpChanges: Int { 10_000 }

    /// Serves `collection` through `queries`, each at `GET <path>/<query name>`, answered as
    /// StateLoopWire's `RowsDifference`.
    ///
    /// - A request without `cookie` gets the query's whole result (`replace`), in its order,
    ///   with a cookie.
    /// - A request with the cookie of an earlier answer gets the rows that entered or changed
    ///   since and the ids that left. A cookie of another epoch (the store was restored), one
    ///   older than the change feed still holds, one the server never handed out, and any
    ///   cookie for a query with a limit get the whole result again, with `replace`.
    /// - `readable` says which rows the principal may read, from the rows' declared fields: a
    ///   row it refuses is in no answer, and a row that becomes unreadable is removed, as one
    ///   that left the query.
    ///
    /// A query that reads a field the collection does not declare is a mistake of the app,
    /// answered 500 and logged with the field's name.
    public func serve<Row>(
        _ collection: ServerCollection<Row>,
        at path: String,
        queries: [CollectionQuery<Access.Principal>],
        readable: @escaping @Sendable (Access.Principal, [String: FieldValue]) -> Bool = { _, _ in true }
    ) {
        let fields = Set(collection.fieldNames)
        declarations.withLock { declared in
            for query in queries {
                declared.append(
                    .query(path: "\(path)/\(query.name)") { request in
                        await self.answer(request, collection: collection.name, fields: fields, query: query, readable: readable)
                    })
            }
        }
    }

    /// What a subscription is answered with, read in one transaction.
    private enum QueryAnswer: Sendable {
        case refused
        case undeclared(field: String)
        case rows(Data, fields: [String])
    }

    private func answer(
        _ request: Request, collection: String, fields: Set<String>, query: CollectionQuery<Access.Principal>,
        readable: @escaping @Sendable (Access.Principal, [String: FieldValue]) -> Bool
    ) async -> Response {
        let items = request.uri.queryParameters
        var cookie: CollectionCookie?
        if let text = items.get("cookie") {
            guard let parsed = CollectionCookie(text) else {
                return ErrorResponse(.badRequest, "invalidCookie", "send back the cookie of an earlier answer as it came, or none").answer
            }
            cookie = parsed
        }
        var parameters: [String: String] = [:]
        for (name, value) in items where name != "cookie" && name != "clientID" {
            parameters[String(name)] = String(value)
        }
        do {
            guard let principal = try await access.principal(for: request) else { return Self.unauthorized }
            let (client, scope) = (Self.clientID(of: request), access.id(of: principal))
            let answer = try await store.read { [parameters, cookie] store -> QueryAnswer in
                let transaction = ServerTransaction(store: store, mayWrite: { _ in false }, isReadOnly: true)
                guard let rows = try query.resolve(transaction, principal, QueryParameters(parameters)) else { return .refused }
                if let field = rows.fields.first(where: { !fields.contains($0) }) { return .undeclared(field: field) }
                let message = try Self.rows(
                    of: collection, matching: rows, since: cookie, in: store,
                    lastMutationID: client.flatMap { try store.lastMutationID(of: $0, scope: scope) }
                ) { readable(principal, $0) }
                return .rows(message, fields: rows.fields)
            }
            switch answer {
            case .refused:
                return Self.notFound
            case .undeclared(let field):
                logger.error(
                    "a query reads a field its collection does not declare: declare it with .field(\"\(field)\") on ServerCollection(\"\(collection)\")",
                    metadata: ["query": "\(query.name)"])
                return ErrorResponse(.internalServerError, "undeclaredField", "the query reads a field the collection does not declare").answer
            case .rows(let message, let queried):
                await prepareIndex(collection, queried)
                return KitJSON.response(.ok, message)
            }
        } catch let error as ErrorResponse {
            return error.answer
        } catch let refusal as MutationRefusal {
            return Self.json(refusal.status, WireMessage.error(refusal.body.error, refusal.body.message))
        } catch {
            logger.warning("query failed", metadata: ["collection": "\(collection)", "query": "\(query.name)", "error": "\(error)"])
            return Self.unavailable
        }
    }

    /// The answer to a subscription at `cookie`: the difference since, when the feed still
    /// holds it and the query has no limit; the whole result otherwise.
    private static func rows(
        of collection: String, matching query: RowQuery, since cookie: CollectionCookie?, in store: any StoreTransaction,
        lastMutationID: UInt64?, readable: ([String: FieldValue]) -> Bool
    ) throws -> Data {
        let bounds = try store.rowFeedBounds()
        let now = CollectionCookie(epoch: store.epoch, position: bounds.newest)
        if let cookie, query.limit == nil, cookie.epoch == store.epoch, (bounds.forgottenThrough...bounds.newest).contains(cookie.position) {
            let changes = try store.rowChanges(of: collection, after: cookie.position, limit: maximumCatchUpChanges + 1)
            if changes.count <= maximumCatchUpChanges {
                let (rows, removed) = RowCatchUp.difference(of: changes, query: query, readable: readable)
                return WireMessage.rows(
                    cookie: now, replace: false, rows: rows.map { ($0.key.id, $0.version, $0.json!) }, removed: removed,
                    lastMutationID: lastMutationID)
            }
        }
        let rows = try store.rows(of: collection, matching: query).filter { readable($0.fields) }
        return WireMessage.rows(
            cookie: now, replace: true, rows: rows.map { ($0.key.id, $0.version, $0.json) }, removed: [], lastMutationID: lastMutationID)
    }

    /// Asks the store for the index of a query's fields, once per server and list of fields.
    private func prepareIndex(_ collection: String, _ fields: [String]) async {
        let name = "\(collection):\(fields.joined(separator: ","))"
        guard preparedIndexes.withLock({ $0.insert(name).inserted }) else { return }
        do {
            try await store.prepareRows(of: collection, indexedBy: fields)
        } catch {
            preparedIndexes.withLock { _ = $0.remove(name) }
            logger.warning("could not index a query", metadata: ["index": "\(name)", "error": "\(error)"])
        }
    }
}
