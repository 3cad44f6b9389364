import Foundation
import HTTPTypes
import Hummingbird
import HummingbirdBcrypt
import HummingbirdWebSocket
import NIOPosix
import NightrideModel
import StateLoopWire

/// The HTTP and WebSocket routes. Each handler reads or changes the core under the server's
/// lock and answers from what it saw there; the fault middleware may then hold the answer back.
extension NightrideServer {
    func makeApplication(port: Int, onRunning: @escaping @Sendable (Int) -> Void) -> some ApplicationProtocol {
        let router = Router(context: NightrideRequestContext.self)
        router.add(middleware: FaultMiddleware(server: self))
        router.post("login") { request, context in await self.login(request, from: context.peer) }
        router.get("me/driver-mode") { request, _ in self.read(.driverMode, request) }
        router.get("me/ride") { request, _ in self.read(.ride, request) }
        router.post("me/driver-mode") { request, _ in await self.changeDriverMode(request) }
        router.post("me/ride") { request, _ in await self.changeRide(request) }
        router.get("places") { request, _ in try await self.places(request) }
        router.get("me/history") { request, _ in self.history(request) }

        let sockets = Router(context: BasicWebSocketRequestContext.self)
        for resource in Resource.allCases {
            let path = "me/\(resource.rawValue)/push"
            sockets.ws(RouterPath(path)) { request, _ in
                let isCut = self.state.withLock { state in
                    _ = state.countRequest("GET /\(path)")
                    return state.isNetworkCut
                }
                if isCut {
                    throw HTTPError(.serviceUnavailable)
                }
                guard self.authenticate(request, allowQueryToken: true) != nil else {
                    throw HTTPError(.unauthorized)
                }
                return .upgrade([:])
            } onUpgrade: { inbound, outbound, context in
                guard let user = self.authenticate(context.request, allowQueryToken: true) else { return }
                let key = ServerState.SocketKey(user: user, resource: resource)
                await self.servePushes(to: key, client: Self.clientID(of: context.request), inbound: inbound, outbound: outbound)
            }
        }

        let connections = self.connections
        return Application(
            router: router,
            server: .http1WebSocketUpgrade(
                webSocketRouter: sockets,
                configuration: .init(http1: .init(additionalChannelHandlers: [connections.tracker()]))
            ),
            configuration: .init(address: .hostname(configuration.host, port: port)),
            onServerRunning: { channel in onRunning(channel.localAddress?.port ?? 0) },
            logger: logger
        )
    }

    // MARK: Handlers

    private func login(_ request: Request, from peer: String) async -> Response {
        guard let body = await JSON.decode(LoginRequest.self, from: request) else {
            return JSON.error(.badRequest, "badRequest", #"expected {"name": "…", "password": "…"}"#)
        }
        // bcrypt reads a C string: a NUL would end the password early, so that "\0secret" and
        // "\0WRONG" would be the same password.
        if let password = body.password,
            password.isEmpty || password.utf8.count > LoginRequest.maximumPasswordBytes || password.utf8.contains(0)
        {
            return Self.response(
                for: Rejection(.invalidPassword, "a password has 1 to \(LoginRequest.maximumPasswordBytes) bytes, none of them NUL")
            )
        }
        // Guessing is slowed down before any hashing: failures are counted per name and per
        // address, and past the limit the login waits, whatever the password.
        if let wait = loginLimits.wait(name: body.name, peer: peer, at: now) {
            var response = JSON.error(.tooManyRequests, "tooManyAttempts", "too many failed sign-ins: try again in \(wait.components.seconds + 1) s")
            response.headers[.retryAfter] = "\(wait.components.seconds + 1)"
            return response
        }
        let token = Self.newToken()
        do {
            let stored = state.withLock { $0.core.passwordHash(of: body.name) }
            let proof = try await Self.proof(of: body.password, against: stored, cost: configuration.passwordCost)
            let answer = try update { (core, now) throws(Rejection) in
                try core.login(name: body.name, token: token, proof: proof, at: now)
            }
            logger.debug("login", metadata: ["user": "\(answer.user)"])
            return JSON.response(answer)
        } catch {
            if error.code == .wrongPassword || error.code == .passwordRequired {
                loginLimits.recordFailure(name: body.name, peer: peer, at: now)
            }
            logger.debug("login refused", metadata: ["name": "\(body.name)", "reason": "\(error)"])
            return Self.response(for: error)
        }
    }

    /// A new session token: 256 bits from the system's cryptographic generator (`getrandom` on
    /// Linux, which needs no file descriptor, so a server out of descriptors still never issues
    /// a predictable token), as 64 hexadecimal digits.
    static func newToken() -> String {
        var generator = SystemRandomNumberGenerator()
        return (0..<4).map { _ in
            let word = String(generator.next() as UInt64, radix: 16)
            return String(repeating: "0", count: 16 - word.count) + word
        }.joined()
    }

    /// The slow half of a login, run outside the lock and on NIO's thread pool (bcrypt takes
    /// milliseconds of CPU; on the request's task it would hold a cooperative thread that every
    /// other request needs): checks `password` against the `stored` hash, or hashes a first
    /// password.
    private static func proof(of password: String?, against stored: String?, cost: UInt8) async throws(Rejection) -> PasswordProof {
        guard let password else { return .none }
        let result: Result<PasswordProof, Rejection>
        do {
            result = try await NIOThreadPool.singleton.runIfActive {
                guard let stored else { return .success(.sets(hash: Bcrypt.hash(password, cost: cost))) }
                return Bcrypt.verify(password, hash: stored)
                    ? .success(.matches(hash: stored)) : .failure(Rejection(.wrongPassword, "wrong name or password"))
            }
        } catch {
            throw Rejection(.wrongPassword, "the server could not check the password now")
        }
        return try result.get()
    }

    private func read(_ resource: Resource, _ request: Request) -> Response {
        guard let user = authenticate(request) else { return Self.unauthorized }
        // Reading applies the switch-offs already due, so a GET never reports a driver mode
        // the timer is about to take back at an earlier time.
        // The value and the reader's lastMutationID are read under the same lock, so the number
        // never names a mutation the value does not contain.
        let client = Self.clientID(of: request)
        let read = update { core, now in
            core.expireInactiveDrivers(at: now)
            return core.snapshot(of: user).map { ($0, core.lastMutationID(of: user, client: client)) }
        }
        guard let (found, lastMutationID) = read else { return Self.unauthorized }
        var snapshot = found
        switch resource {
        case .driverMode:
            snapshot.driverMode.lastMutationID = lastMutationID
            return JSON.response(snapshot.driverMode)
        case .ride:
            snapshot.ride.lastMutationID = lastMutationID
            return JSON.response(snapshot.ride)
        }
    }

    private func changeDriverMode(_ request: Request) async -> Response {
        guard let user = authenticate(request) else { return Self.unauthorized }
        guard let change = await JSON.decode(DriverModeChange.self, from: request) else {
            return JSON.error(.badRequest, "badRequest", #"expected {"on": true|false}"#)
        }
        return acknowledge { () throws(Rejection) in
            let mutationID = try Self.mutationID(of: request)
            return try update { (core, now) throws(Rejection) in
                try core.setDriverMode(change.on, for: user, mutationID: mutationID, at: now)
            }
        }
    }

    private func changeRide(_ request: Request) async -> Response {
        guard let user = authenticate(request) else { return Self.unauthorized }
        guard let action = await JSON.decode(RideAction.self, from: request) else {
            return JSON.error(.badRequest, "badRequest", #"expected {"action": "request"|"cancel"|"accept"|"arrive"|"finish"|"finishSurvey"}"#)
        }
        return acknowledge { () throws(Rejection) in
            let mutationID = try Self.mutationID(of: request)
            return try update { (core, now) throws(Rejection) in
                try core.perform(action, for: user, mutationID: mutationID, at: now)
            }
        }
    }

    private func places(_ request: Request) async throws -> Response {
        guard authenticate(request) != nil else { return Self.unauthorized }
        if configuration.placesLatency > .zero {
            try await sleep(configuration.placesLatency)
        }
        let query = request.uri.queryParameters.get("q") ?? ""
        // The catalog never changes: searched outside the lock that pushes and mutations share.
        let catalog = state.withLock { $0.core.catalog }
        return JSON.response(catalog.search(query))
    }

    private func history(_ request: Request) -> Response {
        guard let user = authenticate(request) else { return Self.unauthorized }
        let cursor = request.uri.queryParameters.get("cursor")
        do {
            let page = try state.withLock { (state) throws(Rejection) in
                try state.core.history(of: user, cursor: cursor, pageSize: configuration.historyPageSize)
            }
            return JSON.response(page)
        } catch {
            return Self.response(for: error)
        }
    }

    // MARK: Helpers

    /// The user of the request's bearer token (or `?token=`, where allowed).
    func authenticate(_ request: Request, allowQueryToken: Bool = false) -> String? {
        var token: String?
        if let header = request.headers[.authorization], header.lowercased().hasPrefix("bearer ") {
            token = String(header.dropFirst("bearer ".count)).trimmingCharacters(in: .whitespaces)
        } else if allowQueryToken {
            token = request.uri.queryParameters.get("token")
        }
        guard let token else { return nil }
        let now = self.now
        return state.withLock { $0.core.user(forToken: token, at: now) }
    }

    private func acknowledge(_ body: () throws(Rejection) -> Version) -> Response {
        do {
            return JSON.response(MutationReceipt(version: try body()))
        } catch {
            logger.debug("rejected", metadata: ["reason": "\(error)"])
            return Self.response(for: error)
        }
    }

    /// The request's `Mutation-ID`, if any, once checked: 1 to 64 bytes of letters, digits and
    /// `-_.:`, so that an id is never stored at any size or used to smuggle text into logs.
    private static func mutationID(of request: Request) throws(Rejection) -> String? {
        guard let id = HTTPField.Name("Mutation-ID").flatMap({ request.headers[$0] }) else { return nil }
        let allowed = id.utf8.allSatisfy { byte in
            (UInt8(ascii: "a")...UInt8(ascii: "z")).contains(byte) || (UInt8(ascii: "A")...UInt8(ascii: "Z")).contains(byte)
                || (UInt8(ascii: "0")...UInt8(ascii: "9")).contains(byte) || Array("-_.:".utf8).contains(byte)
        }
        guard !id.isEmpty, id.utf8.count <= 64, allowed else {
            throw Rejection(.invalidMutationID, "a Mutation-ID has 1 to 64 letters, digits, '-', '_', '.' or ':'")
        }
        return id
    }

    /// The reader's client id (`Client-ID` header, or `?clientID=` on a push upgrade), whose
    /// `lastMutationID` a value carries.
    static func clientID(of request: Request) -> String? {
        HTTPField.Name("Client-ID").flatMap { request.headers[$0] } ?? request.uri.queryParameters.get("clientID").map { String($0) }
    }

    private static var unauthorized: Response {
        JSON.error(.unauthorized, "unauthorized", "missing or unknown bearer token")
    }

    static func response(for rejection: Rejection) -> Response {
        let status: HTTPResponse.Status = switch rejection.code {
        case .invalidTransition, .driverBusy, .mutationIDReused: .conflict
        case .unknownUser: .notFound
        case .invalidName, .invalidPassword, .invalidCursor, .invalidMutationID, .passwordRequired, .unknownPlace: .badRequest
        case .wrongPassword: .unauthorized
        }
        return JSON.response(rejection.body, status: status)
    }
}
