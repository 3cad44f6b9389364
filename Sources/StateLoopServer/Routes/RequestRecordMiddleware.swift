import HTTPTypes
import Hummingbird

/// Counts every answer in the server's metrics (`stateloop_requests_total`) by route and
/// status, the app's own routes as the kit's, and logs it at `info` through the request's
/// logger (so with its `hb.request.id`), with its route, status and duration. The route is the
/// method and the matched route's pattern (`GET /items/{id}`); every request that matches no
/// route goes under one route, `unmatched`, so that the counters stay bounded whatever paths
/// arrive. While the server is watched, it also reports the request with what the routes
/// noted of it (``RequestNote``).
struct RequestRecordMiddleware: RouterMiddleware {
    typealias Context = SyncRequestContext
    let metrics: ServerMetrics
    let activity: ServerActivityObservers

    func handle(_ request: Request, context: Context, next: (Request, Context) async throws -> Response) async throws -> Response {
        // The router sets the endpoint's pattern before a route's middleware runs; the
        // not-found responder, which every unknown path reaches, has none.
        let route = context.endpointPath.map { "\(request.method) \($0)" } ?? "unmatched"
        let started = ContinuousClock.now
        let note = activity.isWatched ? RequestNote() : nil
        do {
            // Unwatched, no task-local value is bound at all.
            let response: Response
            if let note {
                response = try await RequestNote.$current.withValue(note) { try await next(request, context) }
            } else {
                response = try await next(request, context)
            }
            record(route, status: Int(response.status.code), since: started, request: request, note: note, context: context)
            return response
        } catch let error as any HTTPResponseError {
            record(route, status: Int(error.status.code), since: started, request: request, note: note, context: context)
            throw error
        } catch {
            record(route, status: 500, since: started, request: request, note: note, context: context)
            throw error
        }
    }

    private func record(
        _ route: String, status: Int, since started: ContinuousClock.Instant, request: Request, note: RequestNote?, context: Context
    ) {
        let duration = ContinuousClock.now - started
        metrics.countRequest(route, status: status)
        context.logger.info(
            "answered",
            metadata: [
                "route": "\(route)", "status": "\(status)", "duration_ms": "\(duration / .microseconds(1) / 1_000)",
            ])
        guard let note else { return }
        activity.report(
            .request(
                .init(
                    route: route, status: status, duration: duration, mutation: Self.mutationID.flatMap { request.headers[$0] },
                    client: Self.clientID.flatMap { request.headers[$0] }, found: note.value)))
    }

    private static let mutationID = HTTPField.Name("Mutation-ID")
    private static let clientID = HTTPField.Name("Client-ID")
}
