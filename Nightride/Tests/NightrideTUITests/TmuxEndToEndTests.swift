import Foundation
import Logging
import NightrideHarness
import NightrideModel
import NightrideServer
import StateLoopSync
import TestSupport
import Testing

#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// The built `nightride client` in a real terminal (a detached tmux session) against a real
/// server over loopback: what a user sees, the keys they press, and the terminal given back.
@Suite("Terminal UI: end to end in tmux", .serialized)
struct TmuxEndToEndTests {
    @Test(
        "log in with --user, search, request, cancel, history, quit",
        .enabled(if: Tmux.isInstalled, "tmux is not installed (.ci/run installs it)"),
        .timeLimit(.minutes(6))
    )
    func passengerFlow() async throws {
        try await withHarness { harness in
            let (server, tmux, folder) = (harness.server, harness.tmux, harness.folder)
            // An inspector address where none listens: the client says so in its log, not on
            // its screen.
            try harness.start(
                try harness.wrapped(
                    "client --server \(harness.url) --user ann --journal '\(folder.path)/ann.journal' --inspect 'ws://127.0.0.1:9/app?token=t0ken'",
                    password: "ann-pw"))

            // Logged in, both resources loaded: the passenger's empty box.
            var screen = try await tmux.waitFor("Type a place or a district.")
            #expect(screen.contains("Nightride · ann · driver mode off"))
            #expect(screen.contains("Where to?"))

            // Typing searches as you type; the second result is picked and requested.
            try tmux.run(["send-keys", "-t", "nightride", "-l", "gare"])
            screen = try await tmux.waitFor("Gare de l'Est")
            #expect(screen.contains("> Gare du Nord"))
            try tmux.run(["send-keys", "-t", "nightride", "Down"])
            try await tmux.waitFor("> Gare de l'Est")
            try tmux.run(["send-keys", "-t", "nightride", "Enter"])
            try await tmux.waitFor("Looking for a driver…", "To: Gare de l'Est, Paris 10e", "c  cancel the request")
            // The screen is optimistic: wait for the server to have it too.
            let pending = try await Self.eventually("ann's ride pending on the server") {
                if case .pending(let ride) = try await harness.nightride.truth().rideStatus(of: "ann")?.value { return ride } else { return nil }
            }
            #expect(pending.destination.id == "gare-de-l-est")
            #expect(try await harness.nightride.truth().changeLog.records(of: "ann").contains { $0.value == .ride(.pending(pending)) })

            // Cancelled: back to "Where to?", the box emptied by the request, the keys still with
            // the commands (c was one): the next letter is a command, never typed in the box.
            try tmux.run(["send-keys", "-t", "nightride", "c"])
            try await tmux.waitFor("Where to?  (Tab to type a destination)", "Type a place or a district.")
            try await Self.eventually("ann's ride cancelled on the server") {
                try await harness.nightride.truth().rideStatus(of: "ann")?.value == RideStatus.none ? true : nil
            }

            // h opens the history and loads its first page.
            let firstPage = try await server.history(of: "ann")
            try await tmux.waitFor("r refresh · d driver mode · h history · q quit · Tab search box")
            try tmux.run(["send-keys", "-t", "nightride", "h"])
            let newest = try #require(firstPage.items.first)
            try await tmux.waitFor("History · \(firstPage.items.count) rides", "> ", newest.destination.name)
            // Down to the last row loaded: the next page comes in.
            for _ in 1..<firstPage.items.count {
                try tmux.run(["send-keys", "-t", "nightride", "Down"])
            }
            let secondPage = try await server.history(of: "ann", cursor: "\(Self.cursor(of: firstPage))")
            try await tmux.waitFor("History · \(firstPage.items.count + secondPage.items.count) rides")

            // q quits: the normal screen is back, with the terminal settings found.
            try tmux.run(["send-keys", "-t", "nightride", "q"])
            screen = try await tmux.waitFor("terminal ")
            #expect(screen.contains("terminal restored, exit 0"), "\(screen)\nstderr: \(harness.stderr)")
            #expect(!screen.contains("Nightride · ann"), "the alternate screen is gone")
            #expect(
                try tmux.run(["display-message", "-p", "-t", "nightride", "#{alternate_on}"]).trimmingCharacters(in: .whitespacesAndNewlines) == "0")
            #expect(!screen.contains("inspector"), "nothing logged over the screen: \(screen)")
            let log = try String(contentsOf: folder.appendingPathComponent("ann.journal.log"), encoding: .utf8)
            let told = log.split(separator: "\n").filter { $0.contains("no inspector answers at ws://127.0.0.1:9/app") }
            #expect(told.count == 1, "said once, in the client's log: \(log)")
            #expect(!log.contains("t0ken"), "the token stays out of the log")
        }
    }

    @Test(
        "the login screen: the seed's rule, a new account, a wrong password, then the client",
        .enabled(if: Tmux.isInstalled, "tmux is not installed (.ci/run installs it)"),
        .timeLimit(.minutes(6))
    )
    func loginScreen() async throws {
        try await withHarness { harness in
            let tmux = harness.tmux
            let client = try harness.wrapped("client --server \(harness.url) --journal '\(harness.folder.path)/annette.journal'")
            try harness.start(client)

            // Too short a name: the rule shows and Enter only moves to the password.
            try await tmux.waitFor("Nightride · sign in")
            try tmux.run(["send-keys", "-t", "nightride", "-l", "ann"])
            try await tmux.waitFor("> Username  [ann_")
            try tmux.run(["send-keys", "-t", "nightride", "Enter"])
            try tmux.run(["send-keys", "-t", "nightride", "-l", "pw1"])
            var screen = try await tmux.waitFor("> Password  [***_")
            #expect(screen.contains("A username has 5 characters or more"))
            try tmux.run(["send-keys", "-t", "nightride", "Enter"])
            // Back to the name: long enough now, and Enter signs in (a new name: an account).
            try tmux.run(["send-keys", "-t", "nightride", "Tab"])
            try tmux.run(["send-keys", "-t", "nightride", "-l", "ette"])
            try await tmux.waitFor("Enter to sign in")
            #expect(try await harness.nightride.truth().userNames.isEmpty, "nothing was sent while the form was invalid")
            try tmux.run(["send-keys", "-t", "nightride", "Enter"])
            screen = try await tmux.waitFor("Type a place or a district.")
            #expect(screen.contains("Nightride · annette · driver mode off"))
            #expect(try await harness.nightride.truth().userNames == ["annette"], "the sign-in made the account")
            try tmux.run(["send-keys", "-t", "nightride", "Tab"])
            try tmux.run(["send-keys", "-t", "nightride", "q"])
            screen = try await tmux.waitFor("terminal ")
            #expect(screen.contains("terminal restored, exit 0"), "\(screen)\nstderr: \(harness.stderr)")

            // Again, with a wrong password first: refused, the form kept; then the right one.
            try harness.restart(client)
            try await tmux.waitFor("Nightride · sign in")
            try tmux.run(["send-keys", "-t", "nightride", "-l", "annette"])
            try tmux.run(["send-keys", "-t", "nightride", "Tab"])
            try tmux.run(["send-keys", "-t", "nightride", "-l", "nope"])
            try tmux.run(["send-keys", "-t", "nightride", "Enter"])
            screen = try await tmux.waitFor("Wrong password for this username")
            #expect(screen.contains("Username  [annette "))
            try tmux.run(["send-keys", "-t", "nightride", "C-u"])
            try tmux.run(["send-keys", "-t", "nightride", "-l", "pw1"])
            try tmux.run(["send-keys", "-t", "nightride", "Enter"])
            try await tmux.waitFor("Nightride · annette · driver mode off")
            // Esc leaves the login screen, Ctrl-C the client: both give the terminal back.
            try tmux.run(["send-keys", "-t", "nightride", "C-c"])
            screen = try await tmux.waitFor("terminal ")
            #expect(screen.contains("terminal restored, exit 0"), "\(screen)\nstderr: \(harness.stderr)")

            // --user with a wrong password: refused before the terminal is taken.
            try harness.restart(try harness.wrapped("client --server \(harness.url) --user annette", password: "wrong"))
            screen = try await tmux.waitFor("terminal ")
            #expect(screen.contains("terminal restored, exit 1"), "\(screen)")
            let refusal = "cannot log in to \(harness.url) as annette: Wrong password for this username (NIGHTRIDE_PASSWORD)"
            #expect(harness.stderr.contains(refusal), "stderr: \(harness.stderr)")

            // --user without a password in the environment: the login screen asks for it, the
            // name filled in (a password is never a flag, which every user could read).
            try harness.restart(try harness.wrapped("client --server \(harness.url) --user annette"))
            try await tmux.waitFor("Nightride · sign in", "Username  [annette", "> Password  [")
            try tmux.run(["send-keys", "-t", "nightride", "-l", "pw1"])
            try tmux.run(["send-keys", "-t", "nightride", "Enter"])
            try await tmux.waitFor("Nightride · annette · driver mode off")
            try tmux.run(["send-keys", "-t", "nightride", "C-c"])
            screen = try await tmux.waitFor("terminal ")
            #expect(screen.contains("terminal restored, exit 0"), "\(screen)\nstderr: \(harness.stderr)")
        }
    }

    @Test(
        "killed with SIGKILL mid-request, the relaunched client shows the request and sends it, once",
        .enabled(if: Tmux.isInstalled, "tmux is not installed (.ci/run installs it)"),
        .timeLimit(.minutes(6))
    )
    func killAndRelaunch() async throws {
        try await withHarness { harness in
            let tmux = harness.tmux
            let client = "client --server \(harness.url) --user kim --journal '\(harness.folder.path)/kim.journal'"
            // `exec`: the pane's process is the client itself, so that the kill reaches it alone.
            try harness.start("exec " + (try harness.command(client, password: "kim-pw")))
            try await tmux.waitFor("Type a place or a district.")
            try tmux.run(["send-keys", "-t", "nightride", "-l", "gare"])
            try await tmux.waitFor("Gare de l'Est")

            // The network goes; the request is shown at once (optimistic) but cannot leave.
            harness.nightride.isNetworkCut = true
            try tmux.run(["send-keys", "-t", "nightride", "Enter"])
            try await tmux.waitFor("Looking for a driver…")
            try await Self.eventually("the request tried and refused") {
                (harness.nightride.stats.requests["POST /me/ride"] ?? 0) >= 1 ? true : nil
            }
            // The queue is journaled within milliseconds of the key, by a save of its own. The
            // file is locked by the running client (exclusive mode), so it cannot be read from
            // here: 2 s leaves a loaded machine room, where 300 ms was once too short.
            try await Task.sleep(for: .seconds(2))
            let pid = try #require(
                pid_t(tmux.run(["display-message", "-p", "-t", "nightride", "#{pane_pid}"]).trimmingCharacters(in: .whitespacesAndNewlines)))
            #expect(kill(pid, SIGKILL) == 0)
            #expect(try await harness.nightride.truth().rideStatus(of: "kim")?.value == RideStatus.none, "the server never got it")

            // Started again with the network back: the journal shows the request, which then goes out.
            harness.nightride.isNetworkCut = false
            try harness.restart(try harness.wrapped(client, password: "kim-pw"))
            try await tmux.waitFor("Looking for a driver…", "To: Gare du Nord")
            let ride = try await Self.eventually("kim's ride pending on the server") {
                if case .pending(let ride) = try await harness.nightride.truth().rideStatus(of: "kim")?.value { return ride } else { return nil }
            }
            #expect(ride.destination.name == "Gare du Nord")
            #expect(
                try await harness.nightride.truth().changeLog.records(of: "kim").filter { record in
                    if case .ride(.pending) = record.value { true } else { false }
                }.count == 1, "applied once")
            try tmux.run(["send-keys", "-t", "nightride", "q"])
            let screen = try await tmux.waitFor("terminal ")
            #expect(screen.contains("terminal restored, exit 0"), "\(screen)\nstderr: \(harness.stderr)")
        }
    }

    @Test(
        "two terminals, a ride in progress, the server restarted: both say signed out within 2 s, then recover after signing in again",
        .enabled(if: Tmux.isInstalled, "tmux is not installed (.ci/run installs it)"),
        .timeLimit(.minutes(6))
    )
    func serverRestart() async throws {
        try await withHarness { harness in
            let (server, tmux) = (harness.server, harness.tmux)
            try await harness.startAnnieAndBobby()

            // Bob drives, Annie asks, Bob accepts: a ride in progress on both screens.
            try await harness.offerBobbyAnniesRide()
            try tmux.run(["send-keys", "-t", "bob", "a"])
            try await tmux.waitFor("is on the way")
            try await tmux.waitFor("Pick up annie", in: "bob")

            // The server restarts with its memory gone: the truth is "signed out", at once.
            let restarted = ContinuousClock.now
            try await server.restart()
            // Hang guards: the latency (about a second on an idle machine) is printed, not judged.
            try await tmux.waitFor("Signed out: sign in again", timeout: .seconds(30))
            try await tmux.waitFor("Signed out: sign in again", in: "bob", timeout: .seconds(30))
            print("signed out shown on both terminals \(ContinuousClock.now - restarted) after the restart (the capture polls every 100 ms)")

            // Signing in again (the name is filled in): the new server's truth, no ride.
            for (session, password) in [("nightride", "pw1"), ("bob", "pw2")] {
                // Typed once the login screen reads keys: switching the terminal's mode drops
                // what was typed before.
                try await tmux.waitFor("> Password  [", in: session)
                try tmux.run(["send-keys", "-t", session, "-l", password])
                try tmux.run(["send-keys", "-t", session, "Enter"])
            }
            try await tmux.waitFor("Type a place or a district.", "Nightride · annie · driver mode off")
            try await tmux.waitFor("Type a place or a district.", "Nightride · bobby · driver mode off", in: "bob")
            #expect(try await harness.nightride.truth().rideStatus(of: "annie")?.value == RideStatus.none)
            #expect(try await harness.nightride.truth().rideStatus(of: "bobby")?.value == RideStatus.none)

            for session in ["nightride", "bob"] {
                try tmux.run(["send-keys", "-t", session, "C-c"])
                let screen = try await tmux.waitFor("terminal ", in: session)
                #expect(screen.contains("terminal restored, exit 0"), "\(screen)\nstderr: \(harness.stderr)")
            }
        }
    }

    @Test(
        "two terminals: a passenger cannot switch driver mode on, a driver is told why a ride went, the history shows a ride just ended",
        .enabled(if: Tmux.isInstalled, "tmux is not installed (.ci/run installs it)"),
        .timeLimit(.minutes(6))
    )
    func toldWhy() async throws {
        try await withHarness { harness in
            let tmux = harness.tmux
            try await harness.startAnnieAndBobby()
            // Annie opens her history before the rides below (the server gave her account some).
            try tmux.run(["send-keys", "-t", "nightride", "Tab"])
            try tmux.run(["send-keys", "-t", "nightride", "h"])
            var screen = try await tmux.waitFor("── History · ")
            #expect(!screen.contains("with bobby"), "\(screen)")
            try tmux.run(["send-keys", "-t", "nightride", "h"])
            try tmux.run(["send-keys", "-t", "nightride", "Tab"])

            // Bob drives, Annie asks, Bob accepts.
            try await harness.offerBobbyAnniesRide()
            try tmux.run(["send-keys", "-t", "bob", "a"])
            screen = try await tmux.waitFor("is on the way")

            // A passenger whose driver is coming has no driver mode key, and d does nothing.
            #expect(screen.contains("r refresh · h history · q quit"), "\(screen)")
            #expect(!screen.contains("d driver mode"), "\(screen)")
            try tmux.run(["send-keys", "-t", "nightride", "d"])
            try await tmux.waitFor("Pick up annie", in: "bob")
            screen = try await tmux.waitFor("is on the way")
            #expect(screen.contains("Nightride · annie · driver mode off"), "\(screen)")
            #expect(try await harness.nightride.truth().driverMode(of: "annie")?.value == false)

            // Annie cancels: Bob is told who cancelled which ride, not left wondering.
            try tmux.run(["send-keys", "-t", "nightride", "c"])
            try await tmux.waitFor("annie cancelled the ride to Gare du Nord (x to dismiss)", "Driver mode is on", in: "bob")
            try tmux.run(["send-keys", "-t", "bob", "x"])
            screen = try await tmux.waitFor("Driver mode is on", without: ["cancelled the ride"], in: "bob")
            #expect(!screen.contains("cancelled the ride"), "dismissed: \(screen)")

            // A ride to the end: Annie's history, opened again, shows it at the top (its first
            // page was loaded when she opened it before the ride, and is loaded again).
            try tmux.run(["send-keys", "-t", "nightride", "Tab"])
            try tmux.run(["send-keys", "-t", "nightride", "-l", "bastille"])
            try await tmux.waitFor("> Bastille")
            try tmux.run(["send-keys", "-t", "nightride", "Enter"])
            try await tmux.waitFor("a  accept the ride", in: "bob")
            try tmux.run(["send-keys", "-t", "bob", "a"])
            try await tmux.waitFor("Pick up annie", in: "bob")
            try tmux.run(["send-keys", "-t", "bob", "v"])
            try await tmux.waitFor("f  finish the ride", in: "bob")
            try tmux.run(["send-keys", "-t", "bob", "f"])
            // The survey asks, and Annie answers: 4 stars, kept with the ride in her history.
            try await tmux.waitFor("How was your ride with bobby?", "1 to 5  rate it")
            try tmux.run(["send-keys", "-t", "nightride", "4"])
            try await tmux.waitFor("Where to?  (Tab to type a destination)")
            try tmux.run(["send-keys", "-t", "nightride", "h"])
            screen = try await tmux.waitFor("── History · ", "rode to Bastille, Paris 11e with bobby")
            let newest = try #require(screen.split(separator: "\n").first { $0.hasPrefix("> ") })
            #expect(newest.contains("rode to Bastille, Paris 11e with bobby · ★★★★"), "the ride just ended is the newest row, rated: \(screen)")
            #expect(newest.contains(" 20"), "dated when it ended: \(newest)")

            for session in ["nightride", "bob"] {
                try tmux.run(["send-keys", "-t", session, "C-c"])
                let ended = try await tmux.waitFor("terminal ", in: session)
                #expect(ended.contains("terminal restored, exit 0"), "\(ended)\nstderr: \(harness.stderr)")
            }
        }
    }

    /// Runs `body` with a fresh server, tmux server and folder, all gone afterwards.
    private func withHarness(_ body: (Harness) async throws -> Void) async throws {
        var logger = Logger(label: "tmux-test")
        logger.logLevel = .critical
        // Sample histories, so that the history screen has two pages to go through.
        let nightride = ServerHarness(configuration: .init(port: 0, inactivityTimeout: nil), sampleHistory: true, logger: logger)
        let server = nightride.server
        let port = try await server.start()
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("nightride-tui-\(getpid())-\(UInt32.random(in: 0...UInt32.max))")
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        let harness = Harness(
            nightride: nightride, url: "http://127.0.0.1:\(port)", folder: folder,
            tmux: Tmux(socket: "nightride-test-\(getpid())-\(UInt32.random(in: 0...UInt32.max))"))
        defer {
            harness.tmux.killServer()
            try? FileManager.default.removeItem(at: folder)
        }
        // A session that outlives the clients' sessions: a tmux server whose last session ends
        // (killed by `restart`, or its client killed with SIGKILL) exits on its own, and a
        // `new-session` sent while it is exiting fails. With this one the server stays until
        // `killServer`, or until the sleep ends if the test process dies first.
        try harness.tmux.run(["new-session", "-d", "-s", "keeper", "sleep 900"])
        do {
            try await body(harness)
        } catch {
            await server.stop()
            // A client that crashed wrote its backtrace there (see `Harness.command`).
            Issue.record("the clients' standard error:\n\(harness.stderr)")
            throw error
        }
        await server.stop()
    }

    /// The cursor in a page's `next` address.
    private static func cursor(of page: HistoryPage) throws -> String {
        let next = try #require(page.next)
        return try #require(URLComponents(string: next)?.queryItems?.first { $0.name == "cursor" }?.value)
    }

    /// Polls `check` until it gives a value.
    @discardableResult
    private static func eventually<T>(_ what: String, timeout: Duration = .seconds(30), _ check: () async throws -> T?) async throws -> T {
        let deadline = ContinuousClock.now + timeout
        while true {
            if let value = try await check() { return value }
            guard ContinuousClock.now < deadline else { throw Timeout(description: "timed out waiting for \(what)") }
            try await Task.sleep(for: .milliseconds(50))
        }
    }
}

/// One test's world: a server on loopback, a folder for journals and scripts, and a tmux server
/// whose session "nightride" runs the client (a second, "bob", when a test needs two terminals).
struct Harness {
    /// The server, with the truth that clients are checked against.
    let nightride: ServerHarness
    var server: NightrideServer { nightride.server }
    let url: String
    let folder: URL
    let tmux: Tmux

    /// Annie in the terminal "nightride" and Bobby in "bob", each signed in with a journal of
    /// their own, both on "Where to?".
    func startAnnieAndBobby() async throws {
        try start(try wrapped("client --server \(url) --user annie --journal '\(folder.path)/annie.journal'", password: "pw1"))
        try start(try wrapped("client --server \(url) --user bobby --journal '\(folder.path)/bobby.journal'", password: "pw2"), session: "bob")
        try await tmux.waitFor("Type a place or a district.")
        try await tmux.waitFor("Type a place or a district.", in: "bob")
    }

    /// Bobby switches driver mode on, Annie asks for a ride to Gare du Nord, and Bobby is
    /// offered it.
    func offerBobbyAnniesRide() async throws {
        try tmux.run(["send-keys", "-t", "bob", "Tab"])
        try tmux.run(["send-keys", "-t", "bob", "d"])
        try await tmux.waitFor("Driver mode is on", in: "bob")
        try tmux.run(["send-keys", "-t", "nightride", "-l", "gare"])
        try await tmux.waitFor("> Gare du Nord")
        try tmux.run(["send-keys", "-t", "nightride", "Enter"])
        try await tmux.waitFor("a  accept the ride", in: "bob")
    }

    /// The shell command of `nightride` with `arguments`, its standard error to a file, where a
    /// crash's backtrace goes too (Swift's backtracer writes to standard output by default,
    /// which is the pane: a capture would show its first line only).
    ///
    /// With `password`, the client finds it in its environment (`NIGHTRIDE_PASSWORD`), as it
    /// does with `--user` to sign in without the login screen.
    func command(_ arguments: String, password: String? = nil) throws -> String {
        let environment = password.map { "NIGHTRIDE_PASSWORD='\($0)' " } ?? ""
        return
            "env \(environment)SWIFT_BACKTRACE=enable=yes,interactive=no,output-to=stderr '\(try builtProduct(named: "nightride").path)' \(arguments) 2>>'\(folder.path)/stderr.txt'"
    }

    /// `command(arguments)` inside a wrapper that reports, once the client is gone, whether the
    /// terminal settings are the ones found at the start and the exit status; the pane then
    /// stays open for the last capture.
    func wrapped(_ arguments: String, password: String? = nil) throws -> String {
        """
        before=$(stty -g)
        \(try command(arguments, password: password))
        status=$?
        if [ "$(stty -g)" = "$before" ]; then echo "terminal restored, exit $status"; else echo "terminal NOT restored, exit $status"; fi
        sleep 60
        """
    }

    /// Starts the session (`nightride` unless named: a second terminal), 100×30, running `script`.
    func start(_ script: String, session: String = "nightride") throws {
        let file = folder.appendingPathComponent("run-\(UUID().uuidString).sh")
        try script.write(to: file, atomically: true, encoding: .utf8)
        try tmux.run(["new-session", "-d", "-x", "100", "-y", "30", "-s", session, "sh '\(file.path)'"])
    }

    /// Ends whatever the session runs and starts `script` in a new one (a new terminal, as a
    /// user relaunching the client would have).
    func restart(_ script: String) throws {
        _ = try? tmux.run(["kill-session", "-t", "nightride"])
        try start(script)
    }

    /// What the client wrote to standard error so far.
    var stderr: String {
        (try? String(contentsOf: folder.appendingPathComponent("stderr.txt"), encoding: .utf8)) ?? ""
    }
}

/// A waiting or a lookup that did not succeed.
struct Timeout: Error, CustomStringConvertible {
    let description: String
}

/// A tmux server of the test's own (its own socket, no configuration file), so that neither the
/// user's tmux nor another test run is touched.
struct Tmux {
    let socket: String

    /// Whether a `tmux` is on the PATH.
    static var isInstalled: Bool {
        let paths = (ProcessInfo.processInfo.environment["PATH"] ?? "/usr/bin:/bin").split(separator: ":")
        return paths.contains { FileManager.default.isExecutableFile(atPath: "\($0)/tmux") }
    }

    /// Runs a tmux command; its standard output.
    ///
    /// Spawned by hand rather than with `Process`: the first command forks the tmux server,
    /// which must not inherit the signal mask of the test's thread (libdispatch workers block
    /// most signals, and a server that never sees SIGCHLD never notices its panes end), and the
    /// command is reaped with `waitpid` as soon as it exits.
    @discardableResult
    func run(_ arguments: [String]) throws -> String {
        let outputPath = FileManager.default.temporaryDirectory.appendingPathComponent("tmux-\(socket)-\(UUID().uuidString).out").path
        defer { try? FileManager.default.removeItem(atPath: outputPath) }
        // -u: the pane speaks UTF-8 whatever the locale of the test run.
        let status = try spawnAndWait(["tmux", "-u", "-f", "/dev/null", "-L", socket] + arguments, output: outputPath)
        guard status == 0 else {
            throw Timeout(description: "tmux \(arguments.joined(separator: " ")) failed with status \(status)")
        }
        return (try? String(contentsOfFile: outputPath, encoding: .utf8)) ?? ""
    }

    /// The visible pane of `session`, polled until it contains every one of `texts` and none of
    /// `absent` (what a key press must take away: a screen that still shows it was captured
    /// before the key took effect); fails with the last screen seen. Wait for everything a
    /// check reads: a capture can catch a frame half drawn (tmux reads a large frame in several
    /// parts), so a line found says nothing of the lines drawn after it.
    @discardableResult
    func waitFor(
        _ texts: String..., without absent: [String] = [], in session: String = "nightride", timeout: Duration = .seconds(30)
    ) async throws -> String {
        let deadline = ContinuousClock.now + timeout
        var screen = ""
        while true {
            screen = (try? run(["capture-pane", "-p", "-t", session])) ?? screen
            if texts.allSatisfy(screen.contains), !absent.contains(where: screen.contains) { return screen }
            guard ContinuousClock.now < deadline else {
                let missing = texts.filter { !screen.contains($0) }.map { "“\($0)”" } + absent.filter(screen.contains).map { "no “\($0)”" }
                throw Timeout(description: "timed out waiting for \(missing.joined(separator: ", ")); the screen was:\n\(screen)")
            }
            try await Task.sleep(for: .milliseconds(100))
        }
    }

    /// Stops the test's tmux server and everything in it.
    func killServer() {
        _ = try? run(["kill-server"])
    }
}
