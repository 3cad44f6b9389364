import Foundation
import HTTPTypes
import Hummingbird
import HummingbirdBcrypt
import NIOPosix
import NightrideModel
import StateLoopServer
import StateLoopWire

/// The application: the kit's routes for the two values and their mutations, and Nightride's
/// own: sign-in, places and history. A harness's middleware sees every request first.
extension NightrideServer {
    func makeApplication(_ sync: SyncServer<NightrideAccess>, port: Int) -> some ApplicationProtocol {
        sync.application(
            host: configuration.host,
            port: port,
            maximumConnections: configuration.maximumConnections,
            maximumConnectionsPerAddress: configuration.maximumConnectionsPerAddress,
            middleware: hooks.middleware,
            routes: { router in addOwnRoutes(to: router, sync: sync) }
        )
    }

    /// Its routes on a router of their own, the kit's and Nightride's, and the sync server
    /// they serve (its data opened): the server without its host, whose requests a simulation
    /// answers in its own process.
    package func routes() async throws -> (router: Router<SyncRequestContext>, sync: SyncServer<NightrideAccess>) {
        let sync = try await openData().sync
        let router = Router(context: SyncRequestContext.self)
        sync.addRoutes(to: router)
        hooks.middleware(router)
        addOwnRoutes(to: router, sync: sync)
        return (router, sync)
    }

    /// Sign-in, places and history.
    private func addOwnRoutes(to router: Router<SyncRequestContext>, sync: SyncServer<NightrideAccess>) {
        // A refusal or a kit error thrown here is answered by the kit's middleware, as JSON.
        router.post("login") { request, context in try await self.login(request, context: context) }
        router.get("places") { request, _ in
            _ = try await sync.principal(of: request)
            if self.configuration.placesLatency > .zero { try await self.sleep(self.configuration.placesLatency) }
            return try Response.json(self.rules.catalog.search(request.uri.queryParameters.get("q") ?? ""))
        }
        router.get("me/history") { request, _ in
            let user = try await sync.principal(of: request)
            return try Response.json(try await self.history(of: user, cursor: request.uri.queryParameters.get("cursor")))
        }
    }

    // MARK: Sign-in

    /// The largest sign-in body read, in bytes: a name and a password need far less than the
    /// server's limit for mutations, and every byte of a sign-in is read before any limit on
    /// attempts applies.
    static let maximumLoginBodyBytes = 64 * 1024

    private func login(_ request: Request, context: SyncRequestContext) async throws -> Response {
        var context = context
        context.maximumBodyBytes = Self.maximumLoginBodyBytes
        let peer = context.peer
        let body = try await request.decode(as: LoginRequest.self, context: context)
        // bcrypt reads a C string: a NUL would end the password early, so that "\0secret" and
        // "\0WRONG" would be the same password.
        if let password = body.password,
            password.isEmpty || password.utf8.count > LoginRequest.maximumPasswordBytes || password.utf8.contains(0)
        {
            throw RideRefusal(.invalidPassword, "a password has 1 to \(LoginRequest.maximumPasswordBytes) bytes, none of them NUL")
        }
        let name = try AccountName.checkedLogin(body.name)
        // Every limit is checked before any password is, so an attempt held back costs no
        // hashing; failures count per name and address (see SignInLimits), so a stranger's
        // guesses do not hold the owner back.
        let key = AccountName.key(of: name)
        if let wait = loginLimits.wait(account: key, peer: peer, at: now) {
            throw ErrorResponse.tooManyAttempts(retryAfter: wait, "too many sign-ins of this name")
        }
        do {
            let stored = try await account(key)?.passwordHash
            if stored == nil, body.password != nil {
                // A sign-up: its name meets the rules of new names (checked again in the
                // transaction), and each address makes only so many accounts.
                try AccountName.checkNewAccount(name)
                if let wait = loginLimits.signUpWait(peer: peer, at: now) {
                    throw ErrorResponse.tooManyAttempts(retryAfter: wait, "too many new accounts from this address")
                }
                loginLimits.recordSignUp(peer: peer, at: now)
            }
            let user = try await signIn(name: name, stored: stored, password: body.password)
            loginLimits.recordSuccess(account: key, peer: peer, at: now)
            return try Response.json(user)
        } catch let refusal as RideRefusal {
            if refusal.code == .wrongPassword || refusal.code == .passwordRequired {
                loginLimits.recordFailure(account: key, peer: peer, at: now)
            }
            logger.debug("login refused", metadata: ["name": "\(body.name)", "reason": "\(refusal)"])
            throw refusal
        }
    }

    /// Checks or sets the password outside any transaction (bcrypt is slow on purpose), then
    /// signs in and issues a new session in one transaction: the account's hash must still be
    /// the one `stored` that was checked (``PasswordProof``), so two first sign-ins racing to
    /// create an account cannot both win. A session past the user's cap ends their oldest one,
    /// whose push sockets the kit closes once the sign-in has committed (sockets are per user,
    /// not per session: the user's other clients reconnect, and only the ended session's is
    /// refused).
    private func signIn(name: String, stored: String?, password: String?) async throws -> LoginResponse {
        let proof = try await Self.proof(of: password, against: stored, cost: configuration.passwordCost, inline: configuration.runsOnCallingThread)
        let (places, pastRides) = (rules.catalog.places, hooks.pastRides)
        let life = try await openData()
        let (user, token) = try await life.sync.update { [sessions = life.sessions] transaction in
            // Not a ride operation: the dispatch book is neither read nor locked.
            var world = StoreWorld(transaction)
            let user = try world.signIn(name: name, proof: proof) { pastRides($0, places) }
            return (user, try sessions.issue(to: user, in: transaction))
        }
        logger.debug("login", metadata: ["user": "\(user)"])
        return LoginResponse(token: token, user: user)
    }

    /// The slow half of a login, on NIO's thread pool (bcrypt takes milliseconds of CPU; on the
    /// request's task it would hold a cooperative thread that every other request needs): checks
    /// `password` against the `stored` hash, or hashes a first password.
    private static func proof(of password: String?, against stored: String?, cost: UInt8, inline: Bool) async throws -> PasswordProof {
        guard let password else { return .none }
        let check: @Sendable () -> Result<PasswordProof, RideRefusal> = {
            guard let stored else { return .success(.sets(hash: Bcrypt.hash(password, cost: cost))) }
            return Bcrypt.verify(password, hash: stored)
                ? .success(.matches(hash: stored)) : .failure(RideRefusal(.wrongPassword, "wrong name or password"))
        }
        if inline { return try check().get() }
        let result: Result<PasswordProof, RideRefusal>
        do {
            result = try await NIOThreadPool.singleton.runIfActive(check)
        } catch {
            throw RideRefusal(.wrongPassword, "the server could not check the password now")
        }
        return try result.get()
    }
}
