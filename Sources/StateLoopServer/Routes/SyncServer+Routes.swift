import Foundation
import HTTPTypes
import Hummingbird
import NIOCore
import StateLoopWire

/// The HTTP routes: reads and mutations. Every answer is JSON (StateLoopWire's types), every
/// error an `ErrorBody`, and every answer is counted in the metrics by route and status.
extension SyncServer {
    /// Adds the declared resources' `GET` (and `HEAD`) routes, the mutation routes, the health
    /// routes (`GET /health/live` and `/health/ready`) and the metrics route (`GET /metrics`),
    /// unless configured otherwise, to `router`, with the
    /// middleware that gives the routes added after them the server's body limit
    /// (``SyncRequestContext/maximumBodyBytes``) and the kit's JSON errors.
    public func addRoutes(to router: Router<SyncRequestContext>) {
        addBodyLimit(to: router)
        _ = addKitRoutes(to: router)
    }

    /// Gives every request's context the configured body limit: add it before any other
    /// middleware, which then sees it too.
    func addBodyLimit(to router: Router<SyncRequestContext>) {
        router.add(middleware: BodyLimitMiddleware(maximumBodyBytes: configuration.maximumBodyBytes))
    }

    /// Adds the kit's routes; returns the table the error middleware answers 404 and 405 from,
    /// for ``application(host:port:idleTimeout:requestHeadTimeout:requestBodyTimeout:maximumHeadBytes:maximumConnections:maximumConnectionsPerAddress:additionalChannelHandlers:middleware:routes:onServerRunning:)``
    /// to fill with the app's routes too.
    func addKitRoutes(to router: Router<SyncRequestContext>) -> RouteTable {
        let table = RouteTable([])
        // Outside the error middleware: what it makes of a thrown error is what is counted.
        router.add(middleware: RequestRecordMiddleware(metrics: metrics, activity: activity))
        router.add(middleware: RouteErrorMiddleware(table: table))
        addDeclaredRoutes(to: router)
        table.learn(router)
        return table
    }

    private func addDeclaredRoutes(to router: Router<SyncRequestContext>) {
        for declaration in declared {
            switch declaration {
            case .read(let path, let resource, let key):
                router.get(RouterPath(path)) { request, context in
                    await self.read(request, context, resource: resource, key: key)
                }
                router.head(RouterPath(path)) { request, context in
                    var response = await self.read(request, context, resource: resource, key: key)
                    response.body = ResponseBody()
                    return response
                }
            case .mutation(let path, let run):
                router.post(RouterPath(path)) { request, context in
                    await self.mutate(request, context, run: run)
                }
            case .query(let declaration):
                router.get(RouterPath(declaration.path)) { request, _ in await self.answer(request, declaration) }
            }
        }
        if let healthPath = configuration.healthPath {
            router.get(RouterPath(healthPath + "/live")) { _, _ in
                try Response.json(["status": "live"])
            }
            router.get(RouterPath(healthPath + "/ready")) { _, _ in
                try await self.readiness()
            }
        }
        guard let metricsPath = configuration.metricsPath else { return }
        router.get(RouterPath(metricsPath)) { _, _ in
            Response(
                status: .ok, headers: [.contentType: "text/plain; version=0.0.4"],
                body: ResponseBody(byteBuffer: ByteBuffer(string: self.metrics.rendered()))
            )
        }
    }

    /// 200 when a commit can go through now: the server is not shutting down, and an empty
    /// write transaction commits (it writes nothing and reaches no observer, but it takes the
    /// store's write lock, or a writer connection and the database's answer, within the
    /// store's deadline); 503 with `Retry-After` otherwise.
    private func readiness() async throws -> Response {
        guard hub.isAccepting else {
            return ErrorResponse(.serviceUnavailable, "stopping", "the server is shutting down", headers: [.retryAfter: "1"]).answer
        }
        do {
            try await store.write { _ in }
        } catch {
            logger.notice("not ready: the store cannot commit", metadata: ["error": "\(error)"])
            return ErrorResponse.unavailable.answer
        }
        return try Response.json(["status": "ready"])
    }

    /// The principal `request` comes from, for an app's own route, as the kit's routes find it:
    /// throws ``ErrorResponse/unauthorized`` (401) when the access policy finds no valid session,
    /// and ``ErrorResponse/unavailable`` (503) when it cannot tell (its store is unreachable).
    ///
    /// ```swift
    /// router.get("me/history") { request, _ in
    ///     let user = try await server.principal(of: request)
    ///     return try Response.json(try await history(of: user))
    /// }
    /// ```
    public func principal(of request: Request) async throws(ErrorResponse) -> Access.Principal {
        let found: Access.Principal?
        do {
            found = try await access.principal(for: request)
        } catch {
            logger.warning("a session could not be checked", metadata: ["error": "\(error)"])
            throw .unavailable
        }
        guard let found else { throw .unauthorized }
        RequestNote.principal(found, id: access.id(of: found))
        return found
    }

    private func read(
        _ request: Request, _ context: SyncRequestContext, resource: String, key: (Access.Principal, Parameters) -> String?
    ) async -> Response {
        do {
            guard let principal = try await access.principal(for: request) else { return Self.unauthorized }
            let scope = access.id(of: principal)
            RequestNote.principal(principal, id: scope)
            guard let id = key(principal, context.parameters) else { return Self.notFound }
            let resourceKey = ResourceKey(resource: resource, id: id)
            guard access.mayRead(resourceKey, as: principal) else { return Self.notFound }
            let (value, lastMutationID) = try await store.read(resourceKey, lastMutationIDOf: Self.clientID(of: request), scope: scope)
            RequestNote.key(resourceKey, version: value?.version)
            guard let value else { return Self.notFound }
            return KitJSON.response(.ok, Data(WireMessage.versioned(value, lastMutationID: lastMutationID).utf8))
        } catch {
            logger.warning("read failed", metadata: ["error": "\(error)"])
            return Self.unavailable
        }
    }

    private func mutate(_ request: Request, _ context: SyncRequestContext, run: @escaping MutationRunner) async -> Response {
        let principal: Access.Principal
        do {
            guard let found = try await access.principal(for: request) else { return Self.unauthorized }
            principal = found
        } catch {
            return Self.unavailable
        }
        let scope = access.id(of: principal)
        RequestNote.principal(principal, id: scope)
        let mutationID: MutationID
        switch Self.mutationID(of: request) {
        case .success(let id): mutationID = id
        case .failure(let refusal): return Self.json(refusal.status, WireMessage.error(refusal.body.error, refusal.body.message))
        }
        let body: ByteBuffer
        do throws(ErrorResponse) {
            body = try await SyncRequestDecoder.collect(request.body, upTo: context.maximumBodyBytes)
        } catch {
            return error.answer
        }
        let parameters = context.parameters
        let mutation = IncomingMutation(
            id: mutationID, scope: scope,
            fingerprint: Self.fingerprint(method: request.method.rawValue, path: request.uri.path, body: body)
        )
        let access = self.access
        let logger = self.logger
        // What the client sent, for whoever watches: the request's path and its body, up to a
        // size that the inspector's buffer may hold many of.
        let path = "\(request.method) \(request.uri.path)"
        let watchedBody = activity.isWatched && body.readableBytes <= ServerActivity.MutationReport.bodyLimit ? Data(body.readableBytesView) : nil
        // Decoded before the store's write lock, which every other writer waits on; its refusal
        // still comes after the remembered answer, from inside the transaction.
        let decoded = Result { try run(parameters, principal, body) }
        do {
            let activity = activity
            let (answer, closings) = try await timedWrite { store in
                let processed = try mutation.process(in: store, mayWrite: { access.mayWrite($0, as: principal) }, logger: logger) {
                    let prepared = try decoded.get()
                    // A row's mutation is the handler's to allow: the policy reads values.
                    guard prepared.isRow || access.mayRead(prepared.key, as: principal) else { throw MutationRefusal.notFound }
                    return prepared
                }
                // Inside the transaction, once it is decided: it commits before the next
                // transaction starts, so this report comes before its commit's.
                if activity.isWatched {
                    var report = processed.report(of: mutation)
                    (report.path, report.body) = (path, watchedBody)
                    activity.report(.mutation(report))
                    if let key = processed.key { RequestNote.key(key, version: report.version) }
                }
                return (processed.answer, processed.closings)
            }
            closeSockets(closings)
            return Self.json(answer.status, answer.body)
        } catch {
            // Nothing was committed, so nothing is remembered: the client's retry runs it anew.
            logger.error("mutation failed", metadata: ["mutation": "\(mutationID)", "error": "\(error)"])
            activity.report(
                .mutation(.init(id: mutationID, scope: scope, outcome: .failed, status: 503, refusal: "\(error)", path: path, body: watchedBody)))
            return Self.unavailable
        }
    }

    // MARK: Requests

    /// The `Mutation-ID` header, checked: `<client>:<sequence>`, 1 to 64 bytes of letters,
    /// digits and `-_.:`, so an id is never stored at any size or used to smuggle text into logs.
    static func mutationID(of request: Request) -> Result<MutationID, MutationRefusal> {
        guard let raw = HTTPField.Name("Mutation-ID").flatMap({ request.headers[$0] }) else {
            return .failure(MutationRefusal("missingMutationID", "a mutation needs a Mutation-ID header (<client>:<sequence>)", status: 400))
        }
        let id = MutationID(rawValue: raw)
        // A sequence beyond Int64 could not be stored and compared as a number.
        guard Self.isToken(raw, maximumBytes: 64, extra: "-_.:"), let sequence = id.parts?.sequence, sequence <= UInt64(Int64.max) else {
            return .failure(
                MutationRefusal(
                    "invalidMutationID", "a Mutation-ID is <client>:<sequence>, at most 64 letters, digits, '-', '_', '.' or ':'", status: 400
                ))
        }
        return .success(id)
    }

    /// The reader's client id (`Client-ID` header, or `?clientID=` where headers cannot be
    /// set), if it is a well-formed one.
    static func clientID(of request: Request) -> ClientID? {
        let raw = HTTPField.Name("Client-ID").flatMap { request.headers[$0] } ?? request.uri.queryParameters.get("clientID")
        guard let raw, isToken(raw, maximumBytes: 64, extra: "-_.") else { return nil }
        return ClientID(rawValue: raw)
    }

    static func isToken(_ text: String, maximumBytes: Int, extra: String) -> Bool {
        let extraBytes = Array(extra.utf8)
        return !text.isEmpty && text.utf8.count <= maximumBytes
            && text.utf8.allSatisfy { byte in
                (UInt8(ascii: "a")...UInt8(ascii: "z")).contains(byte) || (UInt8(ascii: "A")...UInt8(ascii: "Z")).contains(byte)
                    || (UInt8(ascii: "0")...UInt8(ascii: "9")).contains(byte) || extraBytes.contains(byte)
            }
    }

    /// What a mutation asks for, digested (FNV-1a, 64 bits): a retry must ask for the same. The
    /// body is digested in a canonical form (keys sorted), since a client may encode the same
    /// mutation with its keys in another order when it retries, even from another launch.
    static func fingerprint(method: String, path: String, body: ByteBuffer) -> UInt64 {
        var hash: UInt64 = 0xcbf2_9ce4_8422_2325
        func mix(_ byte: UInt8) {
            hash ^= UInt64(byte)
            hash &*= 0x0000_0100_0000_01b3
        }
        method.utf8.forEach(mix)
        mix(0)
        path.utf8.forEach(mix)
        mix(0)
        let raw = Data(body.readableBytesView)
        let canonical = (try? JSONSerialization.jsonObject(with: raw, options: .fragmentsAllowed))
            .flatMap { try? JSONSerialization.data(withJSONObject: $0, options: [.sortedKeys, .fragmentsAllowed]) }
        (canonical ?? raw).forEach(mix)
        return hash
    }

    /// Decodes a mutation's body as the app's routes decode theirs (``SyncRequestDecoder``):
    /// its error is a refusal, answered from inside the transaction.
    static func decode<Body: Decodable>(_ type: Body.Type, from body: ByteBuffer) throws -> Body {
        do throws(ErrorResponse) {
            return try SyncRequestDecoder.decode(Body.self, from: body)
        } catch {
            throw MutationRefusal(error.body.error, error.body.message, status: Int(error.status.code))
        }
    }

    // MARK: Answers

    static func json(_ status: Int, _ body: Data) -> Response {
        KitJSON.response(HTTPResponse.Status(code: status), body)
    }

    static var unauthorized: Response {
        ErrorResponse.unauthorized.answer
    }

    static var notFound: Response {
        json(404, WireMessage.notFound)
    }

    /// The store could not be reached or the commit failed: worth retrying.
    static var unavailable: Response {
        ErrorResponse.unavailable.answer
    }
}
