import ArgumentParser
import Foundation
import Logging
import StateLoopInspectorServer

/// `stateloop-inspector`: the inspector's server (the default), and the session-to-test tool.
@main
struct InspectorCommandLine: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "stateloop-inspector",
        abstract: "A live inspector for StateLoop apps: every event, state diff, effect, and time travel, in the browser.",
        subcommands: [ServeCommand.self, MakeTestCommand.self],
        defaultSubcommand: ServeCommand.self
    )
}

/// `stateloop-inspector serve`: starts the inspector and prints where to point a browser and apps.
struct ServeCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "serve",
        abstract: "Start the inspector (the default): a page for browsers and a socket for apps, on loopback, behind a token."
    )

    @Option(help: "The port to listen on (0: any free one).")
    var port = 7_357

    @Option(help: "The address to bind. Keep loopback unless the sessions may be seen by others.")
    var host = "127.0.0.1"

    @Option(help: "The token apps and pages must present (default: a random one, printed below).")
    var token: String?

    @Option(help: "How many records to keep per app.")
    var recordsPerApp = 100_000

    mutating func run() async throws {
        guard recordsPerApp > 0 else { throw ValidationError("--records-per-app must be positive") }
        var logger = Logger(label: "stateloop.inspector")
        logger.logLevel = .notice
        let server = try InspectorServer(
            configuration: .init(host: host, port: port, token: token ?? InspectorServer.randomToken(), recordsPerApp: recordsPerApp),
            logger: logger
        )
        do {
            try await server.start()
        } catch {
            throw ValidationError("could not listen on \(host):\(port): \(error). Another inspector may be running: pass --port 0 for any free port.")
        }
        // Written at once, not buffered, so that a script reading the output through a pipe
        // sees the addresses while the inspector runs.
        let banner = """
            StateLoop inspector
              page:  \(server.pageURL ?? "?")
              apps:  \(server.appURL ?? "?")
              (Nightride: swift run --package-path Nightride nightride client --inspect '\(server.appURL ?? "?")')
            Ctrl-C stops it.

            """
        FileHandle.standardOutput.write(Data(banner.utf8))
        await Self.waitForInterrupt()
        await server.stop()
    }

    /// Returns at SIGINT or SIGTERM.
    private static func waitForInterrupt() async {
        let (signals, continuation) = AsyncStream.makeStream(of: Void.self)
        var sources: [any DispatchSourceSignal] = []
        for signal in [SIGINT, SIGTERM] {
            Foundation.signal(signal, SIG_IGN)
            let source = DispatchSource.makeSignalSource(signal: signal)
            source.setEventHandler { continuation.yield() }
            source.resume()
            sources.append(source)
        }
        for await _ in signals { break }
        for source in sources { source.cancel() }
    }
}
