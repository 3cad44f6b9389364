import Foundation
import HTTPTypes
import Hummingbird
import NIOCore
import Synchronization

/// Answers what no route answers with a JSON error, as the kit's routes do: 404 for a path no
/// route has, 405 (with `Allow`) for a declared path asked with another method, and the status
/// of any other `HTTPError` a route or Hummingbird throws. An error a route throws that is no
/// HTTP answer of its own (a store that cannot be reached, say) is logged and answered as the
/// kit's routes answer a store's failure: 503 `unavailable`, which clients retry.
struct RouteErrorMiddleware: RouterMiddleware {
    typealias Context = SyncRequestContext

    /// The paths answered, with their methods: the kit's at first, every route once the
    /// application's router is complete.
    let table: RouteTable

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
        } catch is NIOTooManyBytesError {
            // A route that collected a body itself, past the context's limit: the kit's 413,
            // where Hummingbird answers one with no body.
            return ErrorResponse.bodyTooLarge(limit: context.maximumBodyBytes).answer
        } catch let error as any HTTPResponseError {
            throw error
        } catch {
            context.logger.warning("a route failed", metadata: ["path": "\(request.uri.path)", "error": "\(error)"])
            return ErrorResponse.unavailable.answer
        }
    }

    private func methods(for path: String) -> [HTTPRequest.Method] {
        let segments = path.split(separator: "/")
        var found: [HTTPRequest.Method] = []
        for route in table.entries where route.segments.count == segments.count {
            let matches = zip(route.segments, segments).allSatisfy { pattern, segment in pattern.hasPrefix(":") || pattern == segment }
            if matches { found += route.methods.filter { !found.contains($0) } }
        }
        return found
    }

    private static func json(_ status: HTTPResponse.Status, _ code: String, _ message: String) -> Response {
        ErrorResponse(status, code, message).answer
    }
}

/// The paths a router answers, split into segments (`:` first matches any one segment), with the
/// methods each answers. Shared by reference: the middleware is added before the app's routes,
/// which are learnt once the router is complete.
final class RouteTable: Sendable {
    typealias Entry = (segments: [Substring], methods: [HTTPRequest.Method])
    private let storage: Mutex<[Entry]>

    init(_ entries: [Entry]) {
        storage = Mutex(entries)
    }

    var entries: [Entry] {
        storage.withLock { $0 }
    }

    /// Replaces the table with every route of `router`, the app's own included.
    func learn<Context>(_ router: Router<Context>) {
        var methods: [String: [HTTPRequest.Method]] = [:]
        var segments: [String: [Substring]] = [:]
        for route in router.routes {
            let parts = route.path.components.map { component -> Substring in
                let text = component.description
                return text.hasPrefix("{") || text.contains("*") ? Substring(":" + text) : Substring(text)
            }
            let key = parts.joined(separator: "/")
            segments[key] = parts
            if !(methods[key] ?? []).contains(route.method) { methods[key, default: []].append(route.method) }
        }
        storage.withLock { entries in
            entries = segments.keys.sorted().map { (segments: segments[$0]!, methods: methods[$0]!) }
        }
    }
}
