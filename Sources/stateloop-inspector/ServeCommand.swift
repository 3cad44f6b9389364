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

    @Option(help: "The token apps and pages must present (default: the one kept in the data folder, made at the first start).")
    var token: String?

    @Flag(help: "Replace the kept token with a new one: apps and pages holding the old one are refused.")
    var newToken = false

    @Option(help: "How many records to keep per app.")
    var recordsPerApp = 100_000

    mutating func run() async throws {
        guard recordsPerApp > 0 else { throw ValidationError("--records-per-app must be positive") }
        var logger = Logger(label: "stateloop.inspector")
        logger.logLevel = .notice
        // The same token at every start, unless asked: the apps connect again by themselves and a
        // page left open works after a reload.
        let kept = InspectorToken.defaultFile()
        let chosen: String
        if let token {
            chosen = token
        } else {
            do {
                chosen = try InspectorToken.stored(in: kept, renew: newToken)
            } catch {
                throw ValidationError("could not keep the token in \(kept.path): \(error). Pass --token to choose one.")
            }
        }
        let server = try InspectorServer(
            configuration: .init(host: host, port: port, token: chosen, recordsPerApp: recordsPerApp),
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
              \(token == nil ? "the token is kept in \(kept.path): the same at every start (--new-token replaces it)" : "the token is the one given")
              (Nightride, from StateLoop's folder: swift run --package-path Nightride --scratch-path .build nightride demo --inspect '\(server.appURL ?? "?")')
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
