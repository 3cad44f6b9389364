import ArgumentParser
import Foundation
import Logging
import NightrideClient
import NightrideHarness
import NightrideModel
import NightrideServer
import StateLoopInspector
import StateLoopServer

#if PostgreSQL
    import StateLoopServerPostgres
#endif

/// `nightride server`: runs the backend until interrupted.
struct ServerCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "server",
        abstract: "Run the Nightride server until Ctrl-C.",
        discussion: """
            Users, sessions, rides and histories are kept in a SQLite file that survives restarts and \
            kill -9: by default server.sqlite in $XDG_DATA_HOME/nightride (else ~/.local/share/nightride); \
            --data chooses another file, --memory keeps nothing. An older copy of the file put back is \
            noticed at start (the server.sqlite-highwater file beside it remembers how far it went) and \
            begins a new epoch, so that clients drop what they hold; --restore BACKUP copies a backup in \
            and does the same, --new-epoch forces one (a file restored where the mark is gone). \
            Changes are kept 7 days (--history-days); nothing in memory grows with them. \
            --postgres URL keeps the data in a PostgreSQL database instead, which any number of instances \
            share: a change made through one reaches the clients of all (in a build with the package's \
            PostgreSQL trait: swift build --package-path Nightride --traits PostgreSQL). \
            Settings not given as flags come from the environment (NIGHTRIDE_HOST, PORT, DATABASE_URL, NIGHTRIDE_DATA, \
            LOG_LEVEL, LOG_FORMAT), then from the JSON file --config names ({"port", "database": {"url"}, \
            "nightride": {"host", "data"}, "log": {"level", "format"}}). A database password goes in DATABASE_URL or the \
            file, never in --postgres, where every user of the machine would see it (ps).
            """
    )

    @Option(help: ArgumentHelp("A JSON file of settings (see the discussion above).", valueName: "path"))
    var config: String?

    @Option(help: ArgumentHelp("The SQLite file to keep the data in (created when missing); or NIGHTRIDE_DATA.", valueName: "path"))
    var data: String?

    @Option(
        help: ArgumentHelp(
            "Keep the data in this PostgreSQL database, shared with other instances (postgres://user@host:port/database?sslmode=…), without a password; or DATABASE_URL.",
            valueName: "url"))
    var postgres: String?

    @Flag(help: "Keep the data in memory only: a throwaway server.")
    var memory = false

    @Option(help: ArgumentHelp("Copy this backup over the data file and start a new epoch before serving.", valueName: "backup"))
    var restore: String?

    @Flag(name: .customLong("new-epoch"), help: "Start a new epoch in the data file before serving (after restoring it by hand).")
    var newEpoch = false

    @Option(help: "The address to listen on (127.0.0.1 by default); or NIGHTRIDE_HOST.")
    var host: String?

    @Option(help: "The port to listen on (8080 by default; 0 picks a free one); or PORT.")
    var port: Int?

    @Option(
        name: .customLong("faults"),
        help: ArgumentHelp("Inject network faults (latency, lost pushes, cut sockets) drawn from this seed.", valueName: "seed")
    )
    var faultSeed: UInt64?

    @Option(
        name: .customLong("fault-plan"),
        help: ArgumentHelp("The trouble --faults draws: 'default' (visible, survivable) or 'chaos' (the chaos run's, much more).", valueName: "plan")
    )
    var faultPlan: FaultPlanName = .default

    @Flag(
        help: ArgumentHelp(
            "Read control commands on standard input, one per line (faults on|off, cut on|off, revoke [NAME…], retire NAME…, stats), and answer each on standard output: how a chaos run drives a server in a process of its own.",
            visibility: .hidden))
    var control = false

    @Option(name: .customLong("password-cost"), help: ArgumentHelp("bcrypt's cost for new passwords (4 to 31).", visibility: .hidden))
    var passwordCost: UInt8 = 8

    @Flag(
        name: .customLong("scripted-clients"),
        help: ArgumentHelp(
            "Let sign-ups and sign-ins through by the hundred from one address (failures are still limited): for a chaos run's scripted clients.",
            visibility: .hidden))
    var scriptedClients = false

    @Option(help: ArgumentHelp("Seconds without a driver action before driver mode switches itself off.", valueName: "seconds"))
    var inactivity: Double = 300

    @Option(
        name: .customLong("token-lifetime"),
        help: ArgumentHelp("Seconds a login's token is accepted; afterwards clients must sign in again.", valueName: "seconds"))
    var tokenLifetime: Double = 86_400

    @Flag(
        name: .customLong("sample-history"), help: "Give each new account 15 to 30 invented past rides, so that the history screen has pages to show."
    )
    var sampleHistory = false

    @Option(
        name: .customLong("history-days"),
        help: ArgumentHelp("Days the data keeps each change (the change feed), pruned hourly; clients never need older ones.", valueName: "days"))
    var retentionDays: Int = 7

    @Flag(help: "Log at debug level: logins, refusals, dropped pushes, push sockets.")
    var verbose = false

    @Option(
        help: ArgumentHelp(
            "Send what the server does (requests, mutations, commits, pushes, sockets, sessions) to a StateLoop inspector (the apps address `swift run stateloop-inspector` prints): for debugging, never in production.",
            valueName: "ws-url"
        ))
    var inspect: String?

    @Option(
        name: .customLong("log-level"),
        help:
            "The least severe level logged: trace, debug, info (each answer, with its request id), notice (the default), warning, error, critical; or LOG_LEVEL."
    )
    var logLevel: LogLevel?

    @Option(name: .customLong("log-format"), help: "text (the default), or json: one JSON object a line, for a log collector; or LOG_FORMAT.")
    var logFormat: LogFormat?

    func validate() throws {
        guard inactivity > 0, inactivity.isFinite else { throw ValidationError("--inactivity must be a positive number of seconds") }
        guard tokenLifetime > 0, tokenLifetime.isFinite else { throw ValidationError("--token-lifetime must be a positive number of seconds") }
        guard (4...31).contains(passwordCost) else { throw ValidationError("--password-cost must be 4 to 31") }
        guard (1...36_500).contains(retentionDays) else { throw ValidationError("--history-days must be 1 to 36500") }
        if let inspect { try Self.validateInspectorURL(inspect) }
        if memory && (data != nil || restore != nil || newEpoch) {
            throw ValidationError("--memory keeps no file: it goes without --data, --restore and --new-epoch")
        }
        if postgres != nil && (memory || data != nil || restore != nil || newEpoch) {
            throw ValidationError("--postgres keeps the data in the database: it goes without --memory, --data, --restore and --new-epoch")
        }
        if restore != nil && newEpoch {
            throw ValidationError("--restore starts a new epoch itself: leave out --new-epoch")
        }
        if let restore, !FileManager.default.fileExists(atPath: restore) {
            throw ValidationError("--restore: no backup at \(restore)")
        }
        #if PostgreSQL
            if let postgres, PostgresStore.holdsPassword(postgres) {
                throw ValidationError(
                    "--postgres holds a password, which every user of this machine can read (ps): give the URL in DATABASE_URL or in the --config file"
                )
            }
        #else
            if postgres != nil { throw ValidationError(NightrideServer.builtWithoutPostgreSQL) }
        #endif
    }

    /// The data file: --data (or NIGHTRIDE_DATA), or server.sqlite in the platform's data
    /// folder (created).
    private func dataPath(_ settings: ServerSettings) throws -> String? {
        guard !memory else { return nil }
        if let data = settings.string(data, "nightride.data") { return data }
        let folder = DataFolder.path()
        try FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: true, attributes: [.posixPermissions: 0o700])
        return folder + "/server.sqlite"
    }

    func run() async throws {
        let settings = try await ServerSettings.load(file: config)
        let logFormat =
            try Self.setting(settings.string(logFormat?.rawValue, "log.format")?.lowercased(), LogFormat.self, named: "the log format") ?? .text
        let logLevel =
            try Self.setting(settings.string(logLevel?.rawValue, "log.level")?.lowercased(), LogLevel.self, named: "the log level") ?? .notice
        switch logFormat {
        case .text: LoggingSystem.bootstrap(StreamLogHandler.standardError)
        case .json: LoggingSystem.bootstrap { label in JSONLogHandler(label: label) }
        }
        var logger = Logger(label: "nightride.server")
        logger.logLevel = verbose ? min(.debug, logLevel.level) : logLevel.level
        let host = settings.string(host, "nightride.host") ?? "127.0.0.1"
        let port = try settings.int(port, "port", name: "the port") ?? 8080
        guard (0...65_535).contains(port) else { throw StartUpError(description: "the port must be 0 to 65535, not \(port)") }
        // The store the flags choose; only without one, the settings' database.
        let postgres = memory || data != nil ? nil : settings.string(postgres, "database.url", isSecret: true)
        if postgres != nil, restore != nil || newEpoch {
            throw StartUpError(
                description:
                    "--restore and --new-epoch are for a SQLite data file, and the data is in PostgreSQL here (DATABASE_URL or --config): restore the database with PostgreSQL's tools, or choose --data"
            )
        }
        #if !PostgreSQL
            if postgres != nil { throw StartUpError(description: NightrideServer.builtWithoutPostgreSQL) }
        #endif
        let path = postgres == nil ? try dataPath(settings) : nil
        if let path, let restore {
            let epoch = try SQLiteStore.restore(from: restore, to: path)
            say("Restored \(restore) to \(path), epoch \(epoch)")
        } else if let path, newEpoch {
            say("New epoch \(try SQLiteStore.startNewEpoch(at: path)) in \(path)")
        }
        var configuration = NightrideServer.Configuration(
            dataPath: path,
            postgresURL: postgres,
            host: host,
            port: port,
            inactivityTimeout: .milliseconds(Int64(inactivity * 1_000)),
            tokenLifetime: .milliseconds(Int64(min(tokenLifetime, 1e12) * 1_000)),
            loginLimits: scriptedClients ? .scriptedClients : .init(),
            passwordCost: passwordCost,
            // A server that runs for months: the store forgets what no client needs.
            changeRetention: .seconds(retentionDays * 86_400),
            clientRetention: .seconds(max(retentionDays, 30) * 86_400)
        )
        configuration.inspector = inspect.map { Inspector.nightrideServer(connectingTo: $0) }
        // Faults, control commands and invented histories are the harness's: a server run for
        // users has none of them.
        let harness =
            faultSeed != nil || control || sampleHistory
            ? ServerHarness(
                configuration: configuration,
                faults: faultSeed.map { faultPlan == .chaos ? FaultPlan.chaos(seed: $0) : FaultPlan(seed: $0) },
                sampleHistory: sampleHistory,
                logger: logger
            )
            : nil
        let server = harness?.server ?? NightrideServer(configuration: configuration, logger: logger)
        let bound: Int
        do {
            bound = try await server.start()
        } catch is SyncHost.PortInUse {
            throw StartUpError(
                description: "port \(port) on \(host) is in use: another process listens there (a nightride server started earlier?). "
                    + "Stop it, or start with another --port (0 picks a free one)"
            )
        }
        #if PostgreSQL
            let database = postgres.map(PostgresStore.redacted)
        #else
            let database: String? = nil
        #endif
        say(
            "Nightride listening on http://\(host):\(bound)\(faultSeed.map { " (faults, seed \($0))" } ?? ""), data \(database ?? path ?? "in memory")"
        )
        let controlled = control ? harness.map(Self.obeyControl) : nil
        await Self.interrupted()
        controlled?.cancel()
        say("Stopping…")
        await server.stop()
    }

    /// `text` as a value of `Value`, or a ``StartUpError`` naming the setting and its values.
    private static func setting<Value: RawRepresentable & CaseIterable>(_ text: String?, _: Value.Type, named name: String) throws -> Value?
    where Value.RawValue == String {
        guard let text else { return nil }
        guard let value = Value(rawValue: text) else {
            throw StartUpError(description: "\(name) is \(text), not one of \(Value.allCases.map(\.rawValue).joined(separator: ", "))")
        }
        return value
    }

    /// Reads control commands from standard input on a thread of its own (a blocking read must
    /// not hold the cooperative pool) and answers each on standard output.
    private static func obeyControl(_ harness: ServerHarness) -> Task<Void, Never> {
        let (lines, continuation) = AsyncStream.makeStream(of: String.self)
        Thread.detachNewThread {
            while let line = readLine() { continuation.yield(line) }
            continuation.finish()
        }
        return Task {
            for await line in lines {
                say(await harness.control(line))
            }
        }
    }

    /// Which trouble `--faults` draws.
    /// The least severe level logged, as `--log-level` spells it.
    enum LogLevel: String, ExpressibleByArgument, CaseIterable {
        case trace, debug, info, notice, warning, error, critical

        var level: Logger.Level {
            Logger.Level(rawValue: rawValue) ?? .notice
        }
    }

    /// How log lines are written.
    enum LogFormat: String, ExpressibleByArgument, CaseIterable {
        case text
        case json
    }

    enum FaultPlanName: String, ExpressibleByArgument {
        case `default`, chaos
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
        for source in sources { source.cancel() }
    }
}

/// What stops `nightride server` from starting, said in the command's own terms.
struct StartUpError: Error, CustomStringConvertible {
    let description: String
}
