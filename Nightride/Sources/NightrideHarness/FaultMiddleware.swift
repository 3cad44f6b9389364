import Hummingbird
import StateLoopServer

/// Counts every request by route (those that match none under one counter, so that the counts
/// stay bounded whatever paths arrive) and applies the fault plan to HTTP answers: a 503 instead of
/// handling, a delay after handling, or a mutation's answer lost after it was applied. The delay comes after the handler on purpose: the
/// answer reflects the state when the request arrived, and a push sent meanwhile overtakes it.
struct FaultMiddleware: RouterMiddleware {
    typealias Context = SyncRequestContext
    let switches: Switches

    func handle(_ request: Request, context: Context, next: (Request, Context) async throws -> Response) async throws -> Response {
        let route = Self.route(of: request, context: context)
        let (number, faults, isCut) = switches.withLock { ($0.countRequest(route), $0.activeFaults, $0.isNetworkCut) }
        if isCut {
            return Response(status: .serviceUnavailable)
        }
        guard let faults else { return try await next(request, context) }
        if faults.fails(request: number, on: route) {
            switches.count { $0.injectedFailures += 1 }
            return Response(status: .serviceUnavailable, headers: [.retryAfter: "1"])
        }
        // A refusal a route throws is an answer like any other: delayed, or lost, the same.
        let response: Response
        do {
            response = try await next(request, context)
        } catch let error as any HTTPResponseError {
            response = try error.response(from: request, context: context)
        }
        try await switches.sleep(faults.latency(ofRequest: number, on: route))
        if request.method == .post, route != "POST /login", response.status == .ok, faults.losesAnswer(request: number, on: route) {
            // Applied, but the client never hears it: it must resend with the same id.
            switches.count { $0.lostAnswers += 1 }
            return Response(status: .serviceUnavailable, headers: [.retryAfter: "1"])
        }
        return response
    }

    /// The counter a request goes under: its method and the matched route's pattern, or
    /// ``unmatched`` for a request no route answers. Never its raw path: anyone can send any
    /// number of distinct paths (and methods), and one counter each would grow without bound.
    static func route(of request: Request, context: Context) -> String {
        // The router sets the endpoint path before it calls a route's middleware; it is unset
        // for the not-found responder, which every unknown path and method reaches.
        guard let pattern = context.endpointPath else { return unmatched }
        return "\(request.method) \(pattern)"
    }

    /// The one counter of every request that matches no route.
    static var unmatched: String { "unmatched" }
}
