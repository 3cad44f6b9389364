import ArgumentParser
import Foundation

/// `nightride`: the Nightride backend and the tools around it, one subcommand each.
@main
struct NightrideCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "nightride",
        abstract: "Nightride, a ride-sharing backend for the StateLoop sync demos.",
        subcommands: [DemoCommand.self, ServerCommand.self, ClientCommand.self, ChaosCommand.self]
    )
}

/// Writes a line to standard output unbuffered, so that each line shows as it happens even
/// through a pipe (a script waiting for "listening", a transcript read live).
func say(_ line: String) {
    FileHandle.standardOutput.write(Data((line + "\n").utf8))
}
