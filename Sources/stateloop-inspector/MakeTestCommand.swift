import ArgumentParser
import Foundation
import StateLoopInspectorServer
import StateLoopInspectorWire

/// `stateloop-inspector make-test`: an exported session becomes a Swift Testing test and its
/// fixture, ready to drop into a test target.
struct MakeTestCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "make-test",
        abstract: "Turn an exported session into a Swift Testing test that replays it through your reducer, state for state.",
        discussion: """
            Writes <name>SessionTests.swift into --output (a folder of a test target) and the session \
            beside it, as Sessions/<name>.session.json: exclude that Sessions folder from the target \
            in Package.swift. The test fails at the first recorded state the reducer does not give again, \
            naming each differing path. Example:
              stateloop-inspector make-test Nightride-session.json --system "client ann" \\
                --module NightrideClient --state ClientState --event ClientEvent \\
                --reduce ClientState.reduce --name RideCancelled --output Nightride/Tests/NightrideDemoTests/RecordedSessions
            """
    )

    @Argument(help: ArgumentHelp("The session file the inspector's page exported.", valueName: "session.json"))
    var session: String

    @Option(help: "The system to replay, as the session names it (the page lists them).")
    var system: String

    @Option(help: "The module that declares the state, the event and the reducer.")
    var module: String

    @Option(help: "The state type.")
    var state: String

    @Option(help: "The event type.")
    var event: String

    @Option(help: "The reducer, as Swift names it: a static function such as ClientState.reduce.")
    var reduce: String

    @Option(help: "The test's name: the suite is <name>SessionTests.")
    var name: String

    @Option(help: "The folder to write both files into (created if missing).")
    var output: String

    @Flag(help: "Replace files of the same names.")
    var force = false

    func run() throws {
        let recorded: InspectorSession
        do {
            recorded = try JSONDecoder().decode(InspectorSession.self, from: Data(contentsOf: URL(fileURLWithPath: session)))
        } catch {
            throw Failure(description: "cannot read \(session) as an inspector session: \(error)")
        }
        let writer = SessionTestWriter(system: system, module: module, stateType: state, eventType: event, reduce: reduce, name: name)
        let source: String
        do {
            source = try writer.source(for: recorded)
        } catch {
            throw Failure(description: error.description)
        }
        let folder = URL(fileURLWithPath: output, isDirectory: true)
        try FileManager.default.createDirectory(at: folder.appendingPathComponent(SessionTestWriter.fixtureFolder), withIntermediateDirectories: true)
        let test = folder.appendingPathComponent(writer.fileNames.test)
        let fixture = folder.appendingPathComponent(writer.fileNames.fixture)
        for file in [test, fixture] where !force && FileManager.default.fileExists(atPath: file.path) {
            throw Failure(description: "\(file.path) exists: pass --force to replace it")
        }
        try SessionTestWriter.fixture(for: recorded).write(to: fixture)
        try Data(source.utf8).write(to: test)
        print("wrote \(test.path)")
        print("wrote \(fixture.path)")
        print("exclude the fixtures from the test target in Package.swift: exclude: [\"…/\(SessionTestWriter.fixtureFolder)\"]")
    }

    /// A failure that is not a misuse of the options: said without the usage text.
    struct Failure: Error, CustomStringConvertible {
        let description: String
    }
}
