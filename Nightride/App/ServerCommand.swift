import ArgumentParser
import Foundation
import Logging
import NightrideServer

/// `nightride server`: runs the backend until interrupted.
struct ServerCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "server",
        abstract: "Run the Nightride server until Ctrl-C."
    )

    @Option(help: "The address to listen on.")
    var host = "127.0.0.1"

    @Option(help: "The port to listen on; 0 picks a free one.")
    var port = 8080

    @Option(
        name: .customLong("faults"),
        help: ArgumentHelp("Inject network faults (latency, lost pushes, cut sockets) drawn from this seed.", valueName: "seed")
    )
    var faultSeed: UInt64?

    @Option(help: ArgumentHelp("Seconds without a driver action before driver mode switches itself off.", valueName: "seconds"))
    var inactivity: Double = 300

    @Option(name: .customLong("token-lifetime"), help: ArgumentHelp("Seconds a login's token is accepted; afterwards clients must sign in again.", valueName: "seconds"))
    var tokenLifetime: Double = 86_400

    @Flag(help: "Log at debug level: logins, rejections, dropped pushes, push sockets.")
    var verbose = false

    func validate() throws {
        guard inactivity > 0, inactivity.isFinite else { throw ValidationError("--inactivity must be a positive number of seconds") }
        guard tokenLifetime > 0, tokenLifetime.isFinite else { throw ValidationError("--token-lifetime must be a positive number of seconds") }
        guard (0...65_535).contains(port) else { throw ValidationError("--port must be 0 to 65535") }
    }

    func run() async throws {
        LoggingSystem.bootstrap(StreamLogHandler.standardError)
        var logger = Logger(label: "nightride.server")
        logger.logLevel = verbose ? .debug : .notice
        let server = NightrideServer(
            configuration: .init(
                host: host,
                port: port,
                inactivityTimeout: .milliseconds(Int64(inactivity * 1_000)),
                faults: faultSeed.map { FaultPlan(seed: $0) },
                tokenLifetime: .milliseconds(Int64(min(tokenLifetime, 1e12) * 1_000))
            ),
            logger: logger
        )
        let bound = try await server.start()
        say("Nightride listening on http://\(host):\(bound)\(faultSeed.map { " (faults, seed \($0))" } ?? "")")
        await Self.interrupted()
        say("Stopping…")
        await server.stop()
    }

    /// Returns on SIGINT or SIGTERM.
    private static func interrupted() async {
        let (signals, continuation) = AsyncStream.makeStream(of: Void.self)
        var sources: [any DispatchSourceSignal] = []
        for number in [SIGINT, SIGTERM] {
            signal(number, SIG_IGN)
            let source = DispatchSource.makeSignalSource(signal: number)
            source.setEventHandler { continuation.yield() }
            source.resume()
            sources.append(source)
        }
        for await _ in signals { break }
        sources.forEach { $0.cancel() }
    }
}
