import Hummingbird

/// The request context of the push routes, which decide WebSocket upgrades: Hummingbird's core
/// context, plus the box in which a route hands what it granted to the socket it opens.
struct PushRequestContext: RequestContext {
    var coreContext: CoreRequestContextStorage
    let handOver = UpgradeHandOver()

    init(source: ApplicationRequestContextSource) {
        coreContext = CoreRequestContextStorage(source: source)
    }
}
