import Hummingbird

/// Counts every request by route and applies the fault plan to HTTP answers: a 503 instead of
/// handling, a delay after handling, or a mutation's answer lost after it was applied. The delay comes after the handler on purpose: the
/// answer reflects the state when the request arrived, and a push sent meanwhile overtakes it.
struct FaultMiddleware<Context: RequestContext>: RouterMiddleware {
    let server: NightrideServer

    func handle(_ request: Request, context: Context, next: (Request, Context) async throws -> Response) async throws -> Response {
        let route = "\(request.method) \(context.endpointPath ?? request.uri.path)"
        let (number, faults, isCut) = server.state.withLock { ($0.countRequest(route), $0.activeFaults, $0.isNetworkCut) }
        if isCut {
            return Response(status: .serviceUnavailable)
        }
        guard let faults else { return try await next(request, context) }
        if faults.fails(request: number, on: route) {
            server.state.withLock { $0.stats.injectedFailures += 1 }
            return Response(status: .serviceUnavailable, headers: [.retryAfter: "1"])
        }
        let response = try await next(request, context)
        try await server.sleep(faults.latency(ofRequest: number, on: route))
        if request.method == .post, route != "POST /login", response.status == .ok, faults.losesAnswer(request: number, on: route) {
            // Applied, but the client never hears it: it must resend with the same id.
            server.state.withLock { $0.stats.lostAnswers += 1 }
            return Response(status: .serviceUnavailable, headers: [.retryAfter: "1"])
        }
        return response
    }
}
