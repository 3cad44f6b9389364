import Foundation
import StateLoopSync

/// The README's resources example, compiled.
enum ReadmeResources {
    struct Screen: Sendable {
        init(_ driverMode: Versioned<Bool>, _ ride: Versioned<String>) {}
    }

    /// The app's pulls: one request each.
    struct API: Sendable {
        var driverMode: @Sendable () async throws -> Versioned<Bool>
        var rideStatus: @Sendable () async throws -> Versioned<String>
    }

    /// The app's pushes: one stream of messages each.
    struct Pushes: Sendable {
        var driverMode: AsyncStream<PushMessage<Bool>>
        var rideStatus: AsyncStream<PushMessage<String>>
    }

    static func show(_ screen: Screen) {}

    static func sample(api: API, pushes: Pushes) async {
        // README.md:
        let driverMode = RemoteResource(sources: ResourceSources(pull: api.driverMode, push: pushes.driverMode))
        let rideStatus = RemoteResource(sources: ResourceSources(pull: api.rideStatus, push: pushes.rideStatus))
        for await screen in combineLatest(driverMode, rideStatus, into: Screen.init) { show(screen) }
        // End of the example.
    }
}
