import Foundation
import Hummingbird
import StateLoopWire

/// Collections served by query: `GET <path>/<query>` answers a subscription with the rows the
/// query selects, or, from a cookie, with the difference since.
extension SyncServer {
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
        _ collection: RowCollection<Row>,
        at path: String,
        queries: [CollectionQuery<Access.Principal>],
        readable: @escaping @Sendable (Access.Principal, [String: FieldValue]) -> Bool = { _, _ in true }
    ) {
        let fields = Set(collection.fieldNames)
        declarations.withLock { declared in
            for query in queries {
                declared.append(
                    .query(
                        QueryDeclaration(path: "\(path)/\(query.name)", collection: collection.name, fields: fields, query: query, readable: readable)
                    )
                )
            }
        }
    }

    /// Accepts mutations of a collection's rows at `POST <path>`, as
    /// ``mutation(at:body:changes:key:handler:)`` accepts a value's: each request's body decoded
    /// as `Body` and handed to `handler` in one store transaction, at most once per
    /// `Mutation-ID`. The answer is the version that the row `row` names has once the handler's
    /// writes are committed (a deleted row's too), or the ``MutationRefusal`` it threw.
    ///
    /// The access policy's `mayRead` is not asked (it is about values): the handler decides who
    /// may change which rows, and the policy's `mayWrite` is asked for every row written.
    public func mutation<Body: Decodable & Sendable, Row>(
        at path: String,
        body: Body.Type,
        changes collection: RowCollection<Row>,
        row: @escaping @Sendable (Access.Principal, Body) -> String,
        handler: @escaping @Sendable (ServerTransaction, Access.Principal, Body) throws -> Void
    ) {
        let run: MutationRunner = { _, principal, bodyBytes in
            let decoded = try Self.decode(Body.self, from: bodyBytes)
            return IncomingMutation.Prepared(key: collection.key(row(principal, decoded)), isRow: true) { transaction in
                try handler(transaction, principal, decoded)
            }
        }
        declarations.withLock { $0.append(.mutation(path: path, run: run)) }
    }

    /// A declared query of a collection, as its routes answer it.
    struct QueryDeclaration: Sendable {
        let path: String
        let collection: String
        /// The collection's declared fields.
        let fields: Set<String>
        let query: CollectionQuery<Access.Principal>
        let readable: @Sendable (Access.Principal, [String: FieldValue]) -> Bool

        /// The query for `principal` with `parameters`, read in `store`: `nil` when refused.
        ///
        /// - Throws: ``UndeclaredField`` for a query that reads a field the collection does
        ///   not declare, or what the app's body threw.
        func resolve(for principal: Access.Principal, _ parameters: QueryParameters, in store: any StoreTransaction) throws -> RowQuery? {
            let transaction = ServerTransaction(store: store, mayWrite: { _ in false }, isReadOnly: true)
            guard let rows = try query.resolve(transaction, principal, parameters) else { return nil }
            if let field = rows.fields.first(where: { !fields.contains($0) }) { throw UndeclaredField(field: field) }
            return rows
        }
    }

    /// A query that reads a field its collection does not declare: the app's mistake.
    struct UndeclaredField: Error {
        let field: String
    }

    /// A request's parameters for a query: its query items but the kit's own.
    static func queryParameters(of request: Request) -> QueryParameters {
        var parameters: [String: String] = [:]
        for (name, value) in request.uri.queryParameters where name != "cookie" && name != "clientID" && name != "after" {
            parameters[String(name)] = String(value)
        }
        return QueryParameters(parameters)
    }

    /// The request's `cookie`: `nil` for none, `.failure` for one that is not a cookie.
    static func cookie(of request: Request) -> Result<CollectionCookie?, ErrorResponse> {
        guard let text = request.uri.queryParameters.get("cookie") else { return .success(nil) }
        guard let cookie = CollectionCookie(text) else {
            return .failure(ErrorResponse(.badRequest, "invalidCookie", "send back the cookie of an earlier answer as it came, or none"))
        }
        return .success(cookie)
    }

    /// Logs a query's undeclared field, saying how to fix it; the 500 it is answered with.
    func undeclared(_ field: String, _ declaration: QueryDeclaration) -> ErrorResponse {
        logger.error(
            "a query reads a field its collection does not declare: declare it with .field(\"\(field)\") on RowCollection(\"\(declaration.collection)\")",
            metadata: ["query": "\(declaration.query.name)"])
        return ErrorResponse(.internalServerError, "undeclaredField", "the query reads a field the collection does not declare")
    }

    /// `GET <path>/<query>`: the whole result, or the difference since the request's cookie; with
    /// `after` (and no cookie), a page of the whole result, `after=` asking for the first.
    func answer(_ request: Request, _ declaration: QueryDeclaration) async -> Response {
        let cookie: CollectionCookie?
        switch Self.cookie(of: request) {
        case .success(let found): cookie = found
        case .failure(let error): return error.answer
        }
        // A page is asked for from no cookie: a reader holding one catches up from it.
        let after = cookie == nil ? request.uri.queryParameters.get("after") : nil
        let parameters = Self.queryParameters(of: request)
        do {
            guard let principal = try await access.principal(for: request) else { return Self.unauthorized }
            let (client, scope) = (Self.clientID(of: request), access.id(of: principal))
            let answer = try await store.read { store -> (message: Data, fields: [String])? in
                guard let query = try declaration.resolve(for: principal, parameters, in: store) else { return nil }
                let lastMutationID = try client.flatMap { try store.lastMutationID(of: $0, scope: scope) }
                let readable = { declaration.readable(principal, $0) }
                let answer =
                    if let after {
                        try RowsPush.page(
                            of: declaration.collection, matching: query, after: after.isEmpty ? nil : after, in: store,
                            lastMutationID: lastMutationID, readable: readable)
                    } else {
                        try RowsPush.answer(
                            of: declaration.collection, matching: query, since: cookie, in: store, lastMutationID: lastMutationID,
                            readable: readable)
                    }
                return (answer.message, query.fields)
            }
            guard let answer else { return Self.notFound }
            prepareIndex(declaration.collection, answer.fields)
            return KitJSON.response(.ok, answer.message)
        } catch let error as UndeclaredField {
            return undeclared(error.field, declaration).answer
        } catch let error as ErrorResponse {
            return error.answer
        } catch let refusal as MutationRefusal {
            return Self.json(refusal.status, WireMessage.error(refusal.body.error, refusal.body.message))
        } catch {
            logger.warning(
                "query failed", metadata: ["collection": "\(declaration.collection)", "query": "\(declaration.query.name)", "error": "\(error)"])
            return Self.unavailable
        }
    }

    /// Asks the store for the index of a query's fields, once per server and list of fields.
    func prepareIndex(_ collection: String, _ fields: [String]) {
        let name = "\(collection):\(fields.joined(separator: ","))"
        guard preparedIndexes.withLock({ $0.insert(name).inserted }) else { return }
        // Beside the answer, not before it: an index made on a large table takes a while, once.
        Task {
            do {
                try await store.prepareRows(of: collection, indexedBy: fields)
            } catch {
                preparedIndexes.withLock { _ = $0.remove(name) }
                logger.warning("could not index a query", metadata: ["index": "\(name)", "error": "\(error)"])
            }
        }
    }
}
