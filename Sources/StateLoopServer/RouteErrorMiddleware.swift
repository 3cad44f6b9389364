import Foundation
import HTTPTypes
import Hummingbird

/// Answers what no route answers with a JSON error, as the kit's routes do: 404 for a path no
/// route has, 405 (with `Allow`) for a declared path asked with another method, and the status
/// of any other `HTTPError` a route or Hummingbird throws.
struct RouteErrorMiddleware: RouterMiddleware {
    typealias Context = SyncRequestContext

    /// The declared paths, split into segments (`:name` matches any one segment), with the
    /// methods each answers.
    let routes: [(segments: [Substring], methods: [HTTPRequest.Method])]

    func handle(_ request: Request, context: Context, next: (Request, Context) async throws -> Response) async throws -> Response {
        do {
            return try await next(request, context)
        } catch let error as HTTPError where error.status == .notFound {
            let allowed = methods(for: request.uri.path)
            guard !allowed.isEmpty, !allowed.contains(request.method) else {
                return Self.json(.notFound, "notFound", "no such resource")
            }
            var response = Self.json(.methodNotAllowed, "methodNotAllowed", "\(request.method) is not answered here")
            response.headers[.allow] = allowed.map(\.rawValue).joined(separator: ", ")
            return response
        } catch let error as HTTPError {
            return Self.json(error.status, "httpError", error.body ?? error.status.reasonPhrase)
        }
    }

    private func methods(for path: String) -> [HTTPRequest.Method] {
        let segments = path.split(separator: "/")
        var found: [HTTPRequest.Method] = []
        for route in routes where route.segments.count == segments.count {
            let matches = zip(route.segments, segments).allSatisfy { pattern, segment in pattern.hasPrefix(":") || pattern == segment }
            if matches { found += route.methods.filter { !found.contains($0) } }
        }
        return found
    }

    private static func json(_ status: HTTPResponse.Status, _ code: String, _ message: String) -> Response {
        Response(
            status: status, headers: [.contentType: "application/json"],
            body: ResponseBody(byteBuffer: ByteBuffer(bytes: WireMessage.error(code, message)))
        )
    }
}
