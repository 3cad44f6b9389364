import ArgumentParser

/// `nightride`: the Nightride backend and the tools around it, one subcommand each.
@main
struct NightrideCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "nightride",
        abstract: "Nightride, a ride-sharing backend for the StateLoop sync demos.",
        subcommands: [DemoCommand.self, ServerCommand.self, ClientCommand.self, ChaosCommand.self]
    )
}
