import Hummingbird
import StateLoopServer

/// The sign-in route `Sources/StateLoopServer/StateLoopServer.docc/Server.md` shows (between the markers), compiled with the suite;
/// `RouteJSONTests.guideExample` checks that the page shows exactly it, and runs it.
enum LoginRouteExample {
    struct Login: Decodable {
        var name: String
        var password: String
    }

    struct Session: Encodable {
        var token: String
        var user: String
    }

    /// A fixed table of passwords, as the guide's sessions.
    struct Sessions: Sendable {
        let passwords: [String: String]

        func signIn(_ login: Login) async throws -> Session? {
            passwords[login.name] == login.password ? Session(token: "t-\(login.name)", user: login.name) : nil
        }
    }

    static func addRoutes(to router: Router<SyncRequestContext>, sessions: Sessions) {
        // Sources/StateLoopServer/StateLoopServer.docc/Server.md:
        router.post("login") { request, context -> Response in
            let login = try await request.decode(as: Login.self, context: context)
            guard let session = try await sessions.signIn(login) else {
                throw ErrorResponse(.unauthorized, "wrongPassword", "wrong name or password")
            }
            return try Response.json(session)
        }
        // End of the example.
    }
}
