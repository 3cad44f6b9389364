import Hummingbird
import NightrideModel
import StateLoopServer

extension NightrideServer {
    /// What a harness (NightrideHarness: the demo, the chaos runs, the tests) attaches to a server
    /// to watch and disturb it without being part of it. Given when the server is made; a plain
    /// server has none.
    package struct Hooks: Sendable {
        /// Adds middleware that sees every request before any route, the kit's and Nightride's.
        package var middleware: @Sendable (Router<SyncRequestContext>) -> Void
        /// Told of every store the server opens and the sync server it makes on it, before
        /// anything is committed or pushed through them: at the first start, and at each restart
        /// that opens the data again.
        package var opened: @Sendable (any ServerStore, SyncServer<NightrideAccess>) -> Void
        /// The past rides a new account starts with, given its name and the catalog's places
        /// (a demo's invented history); none by default.
        package var pastRides: @Sendable (String, [Place]) -> [Ride]

        /// Hooks; by default, none.
        package init(
            middleware: @escaping @Sendable (Router<SyncRequestContext>) -> Void = { _ in },
            opened: @escaping @Sendable (any ServerStore, SyncServer<NightrideAccess>) -> Void = { _, _ in },
            pastRides: @escaping @Sendable (String, [Place]) -> [Ride] = { _, _ in [] }
        ) {
            self.middleware = middleware
            self.opened = opened
            self.pastRides = pastRides
        }
    }
}
