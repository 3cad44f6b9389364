import HTTPTypes
import Hummingbird
import StateLoopServer

/// The tests' app's own routes, written as an app writes them with the kit's JSON: a body
/// decoded through the context, an answer returned as a value, a refusal thrown.
extension Notes {
    /// A sign-up's body.
    public struct Profile: Codable, Sendable {
        public var name: String
        public var age: Int
        public init(name: String, age: Int) {
            self.name = name
            self.age = age
        }
    }

    /// The answer to a sign-up; its keys are declared out of order, so that the answer shows
    /// they are sorted.
    public struct Welcome: ResponseEncodable, Codable, Sendable, Equatable {
        public var zeta: String
        public var alpha: Int
        public var middle: [String: Int]
    }

    /// `POST /profile`: the body decoded as a ``Profile``, answered with a ``Welcome`` (200),
    /// or refused for the name "root" (409 `nameTaken`). `POST /profile/created` answers the
    /// same with 201. `POST /echo` answers its body, collected up to the context's limit.
    /// `GET /broken` throws an error that is no HTTP answer, as a store that cannot be reached
    /// would.
    public static func addRoutes(to router: Router<SyncRequestContext>) {
        router.post("profile") { request, context in
            let profile = try await request.decode(as: Profile.self, context: context)
            guard profile.name != "root" else { throw ErrorResponse(.conflict, "nameTaken", "the name 'root' is taken") }
            return welcome(profile)
        }
        router.post("profile/created") { request, context -> Response in
            try Response.json(welcome(try await request.decode(as: Profile.self, context: context)), status: .created)
        }
        router.post("echo") { request, context -> Response in
            var request = request
            let body = try await request.collectBody(upTo: context.maxUploadSize)
            return Response(status: .ok, body: ResponseBody(byteBuffer: body))
        }
        router.get("broken") { _, _ -> Response in throw Unreachable() }
    }

    /// What `GET /broken` throws.
    struct Unreachable: Error {}

    private static func welcome(_ profile: Profile) -> Welcome {
        Welcome(zeta: "welcome, \(profile.name)", alpha: profile.age, middle: ["y": 2, "b": 1])
    }
}
