import Hummingbird

/// Counts every answer in the server's metrics (`stateloop_requests_total`) by route and
/// status, the app's own routes as the kit's: the route is the method and the matched route's
/// pattern (`GET /items/{id}`), and every request that matches no route goes under one route,
/// `unmatched`, so that the counters stay bounded whatever paths arrive.
struct RequestMetricsMiddleware: RouterMiddleware {
    typealias Context = SyncRequestContext
    let metrics: ServerMetrics

    func handle(_ request: Request, context: Context, next: (Request, Context) async throws -> Response) async throws -> Response {
        // The router sets the endpoint's pattern before a route's middleware runs; the
        // not-found responder, which every unknown path reaches, has none.
        let route = context.endpointPath.map { "\(request.method) \($0)" } ?? "unmatched"
        do {
            let response = try await next(request, context)
            metrics.countRequest(route, status: Int(response.status.code))
            return response
        } catch let error as any HTTPResponseError {
            metrics.countRequest(route, status: Int(error.status.code))
            throw error
        } catch {
            metrics.countRequest(route, status: 500)
            throw error
        }
    }
}
