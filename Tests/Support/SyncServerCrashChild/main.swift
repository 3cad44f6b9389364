import Logging
import ServerTestApp
import StateLoopServer
import TestSupport

// The server process that the kit's crash test kills: the tests' notes app on a SQLite file.
//
//   sync-server-crash-child <path> <port>
//     listening <port> <epoch>   once it accepts connections; then serves until killed
#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

let arguments = CommandLine.arguments
guard arguments.count == 3, let port = Int(arguments[2]) else {
    report("error usage: sync-server-crash-child <path> <port>")
    exit(2)
}
var logger = Logger(label: "crash-child")
logger.logLevel = .critical
do {
    let store = try SQLiteStore(path: arguments[1])
    let server = SyncServer(store: store, access: Notes.Rules(), logger: logger)
    Notes.declare(on: server)
    let host = SyncHost(port: port, logger: logger) { port in .init(server, application: server.application(port: port)) }
    report("listening \(try await host.start()) \(store.epoch)")
    // Serves until killed: the test ends this process with SIGKILL, never a stop.
    while true { try await Task.sleep(for: .seconds(3_600)) }
} catch {
    report("error \(error)")
    exit(1)
}
