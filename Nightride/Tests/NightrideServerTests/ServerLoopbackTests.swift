import Foundation
import Logging
import NightrideClient
import NightrideHarness
import NightrideModel
import NightrideServer
import StateLoopServer
import StateLoopSync
import StateLoopSyncTransports
import StateLoopTesting
import TestSupport
import Testing
import WSClient

/// The server over real HTTP and WebSocket on loopback, with StateLoop's transports as the
/// client. Real sockets mean the real clock, so every wait here is short and bounded.
@Suite("Nightride server over loopback", .timeLimit(.minutes(4)))
struct ServerLoopbackTests {
    let bastille = Place(id: "bastille", name: "Bastille", area: "Paris 11e")

    @Test("login, then each resource as a versioned value over HTTPPull")
    func loginAndPull() async throws {
        try await withNightride { harness, client in
            let token = try await client.login("ann")
            let mode = try await client.pull("/me/driver-mode", token: token, as: Bool.self)()
            let ride = try await client.pull("/me/ride", token: token, as: RideStatus.self)()
            #expect(mode == Versioned(false, version: Version(epoch: 1, counter: 1)))
            #expect(ride == Versioned(.none, version: Version(epoch: 1, counter: 1)))
            #expect(try await harness.truth().userNames == ["ann"])
            #expect(harness.stats.requests["GET /me/ride"] == 1)
            #expect(harness.stats.requests["POST /login"] == 1)
        }
    }

    @Test(
        "passwords over HTTP: an account is created with one and needs it (401 with a reason), none is refused (400), names in any case are one account"
    )
    func passwords() async throws {
        try await withNightride { harness, client in
            let first = try await client.send("POST", "/login", body: LoginRequest(name: "alice", password: "s3cret"))
            #expect(first.0 == 200)
            let again = try await client.send("POST", "/login", body: LoginRequest(name: " alice", password: "s3cret"))
            #expect(again.0 == 200)
            // Stored hashed, never as given.
            let stored = try #require(await harness.server.passwordHash(of: "alice"))
            #expect(stored.hasPrefix("$2b$") && !stored.contains("s3cret"))

            for wrong in [LoginRequest(name: "alice", password: "guess"), LoginRequest(name: "alice")] {
                let (status, body) = try await client.send("POST", "/login", body: wrong)
                #expect(status == 401)
                #expect(try JSONDecoder().decode(ErrorBody.self, from: body).error == "wrongPassword")
            }
            // A NUL would end the password for bcrypt: "\0WRONG" would match "\0secret".
            for invalid in ["", String(repeating: "é", count: 37), "\u{0}secret"] {
                let (status, body) = try await client.send("POST", "/login", body: LoginRequest(name: "alice", password: invalid))
                #expect(status == 400)
                #expect(try JSONDecoder().decode(ErrorBody.self, from: body).error == "invalidPassword")
            }
            #expect(try await harness.server.passwordHash(of: "alice") == stored)

            // No account without a password; a name in another case is the same account.
            let (unprotected, refusal) = try await client.send("POST", "/login", body: LoginRequest(name: "bruno"))
            #expect(unprotected == 400)
            #expect(try JSONDecoder().decode(ErrorBody.self, from: refusal).error == "passwordRequired")
            let (shouted, answer) = try await client.send("POST", "/login", body: LoginRequest(name: "ALICE", password: "s3cret"))
            #expect(shouted == 200)
            #expect(try JSONDecoder().decode(LoginResponse.self, from: answer).user == "alice")
            let (claimed, _) = try await client.send("POST", "/login", body: LoginRequest(name: "Alice", password: "other"))
            #expect(claimed == 401)
            #expect(try await harness.truth().userNames == ["alice"])
        }
    }

    @Test("a ride to a place that is not in the catalog is refused; a known id rides to the catalog's place, whatever name came with it")
    func destinationsChecked() async throws {
        try await withNightride { harness, client in
            let token = try await client.login("ann")
            let nowhere = Place(id: "atlantis", name: "Atlantis", area: "nowhere")
            let (status, body) = try await client.send(
                "POST", "/me/ride", token: token, body: RideAction.request(destination: nowhere), mutationID: "t:1"
            )
            #expect(status == 400)
            #expect(try JSONDecoder().decode(ErrorBody.self, from: body).error == "unknownPlace")
            #expect(try await harness.truth().rideStatus(of: "ann")?.value == RideStatus.none)

            let forged = Place(id: "bastille", name: "\u{1B}[2JFree rides", area: "anywhere")
            let (accepted, _) = try await client.send(
                "POST", "/me/ride", token: token, body: RideAction.request(destination: forged), mutationID: "t:2"
            )
            #expect(accepted == 200)
            guard case .pending(let ride)? = try await harness.truth().rideStatus(of: "ann")?.value else {
                Issue.record("no pending ride")
                return
            }
            #expect(ride.destination == bastille)
        }
    }

    @Test("a mutation sent twice with one Mutation-ID is applied once and answered alike")
    func idempotentMutation() async throws {
        try await withNightride { harness, client in
            let token = try await client.login("bob")
            let send = client.sender("/me/driver-mode", token: token, as: DriverModeChange.self)
            let switchOn = freshID()
            let first = try await send(DriverModeChange(on: true), switchOn)
            _ = try await send(DriverModeChange(on: false), freshID())
            let retried = try await send(DriverModeChange(on: true), switchOn)
            #expect(first == Version(epoch: 1, counter: 2))
            #expect(retried == first)
            #expect(try await harness.truth().driverMode(of: "bob") == Versioned(false, version: Version(epoch: 1, counter: 3)))
            #expect(try await harness.truth().changeLog.records(of: "bob").filter { $0.resource == .driverMode }.count == 3)

            // A ride action that doesn't fit: 409 with a JSON reason, through the sender too.
            let (status, body) = try await client.send("POST", "/me/ride", token: token, body: RideAction.accept, mutationID: "t:1")
            #expect(status == 409)
            #expect(try JSONDecoder().decode(ErrorBody.self, from: body).error == "invalidTransition")
            let (badStatus, _) = try await client.send("POST", "/me/driver-mode", token: token, body: ["on": "yes"])
            #expect(badStatus == 400)

            // Ids are checked before anything is stored: empty, too long, or with other characters.
            for invalid in ["", String(repeating: "x", count: 65), "a b", "id\u{E9}"] {
                let (status, body) = try await client.send(
                    "POST", "/me/driver-mode", token: token, body: DriverModeChange(on: true), mutationID: invalid
                )
                #expect(status == 400, "Mutation-ID \(invalid.debugDescription)")
                #expect(try JSONDecoder().decode(ErrorBody.self, from: body).error == "invalidMutationID")
            }
            // The id of the refused ride action, reused for a driver-mode change: refused, and
            // nothing changes.
            let (reusedStatus, reusedBody) = try await client.send(
                "POST", "/me/driver-mode", token: token, body: DriverModeChange(on: true), mutationID: "t:1"
            )
            #expect(reusedStatus == 409)
            #expect(try JSONDecoder().decode(ErrorBody.self, from: reusedBody).error == "mutationIDReused")
            #expect(try await harness.truth().driverMode(of: "bob")?.version == Version(epoch: 1, counter: 3))
        }
    }

    @Test("a change is pushed to every socket of its user, and only theirs")
    func pushes() async throws {
        try await withNightride { harness, client in
            let ann = try await client.login("ann")
            let bob = try await client.login("bob")
            let annPhone = client.pushes("/me/driver-mode/push", token: ann, as: Bool.self)
            let annLaptop = client.pushes("/me/driver-mode/push", token: nil, query: "?token=\(ann)", as: Bool.self)
            let bobPhone = client.pushes("/me/driver-mode/push", token: bob, as: Bool.self)
            defer { for inbox in [annPhone, annLaptop, bobPhone] { inbox.close() } }
            // Each socket starts with the current value.
            #expect(try await annPhone.next().version.counter == 1)
            #expect(try await annLaptop.next().version.counter == 1)
            #expect(try await bobPhone.next().version.counter == 1)
            #expect(harness.stats.openSockets == 3)

            _ = try await client.sender("/me/driver-mode", token: ann, as: DriverModeChange.self)(DriverModeChange(on: true), freshID())
            #expect(try await annPhone.next() == Versioned(true, version: Version(epoch: 1, counter: 2)))
            #expect(try await annLaptop.next() == Versioned(true, version: Version(epoch: 1, counter: 2)))
            _ = try await client.sender("/me/driver-mode", token: bob, as: DriverModeChange.self)(DriverModeChange(on: true), freshID())
            #expect(try await bobPhone.next() == Versioned(true, version: Version(epoch: 1, counter: 2)))
            #expect(bobPhone.pending.isEmpty)
        }
    }

    @Test("a passenger's request and cancel reach the driver as pushes: a server-side change")
    func cancelReachesDriver() async throws {
        try await withNightride { harness, client in
            let ann = try await client.login("ann")
            let bob = try await client.login("bob")
            let bobRide = client.pushes("/me/ride/push", token: bob, as: RideStatus.self)
            defer { bobRide.close() }
            #expect(try await bobRide.next().value == RideStatus.none)
            _ = try await client.sender("/me/driver-mode", token: bob, as: DriverModeChange.self)(DriverModeChange(on: true), freshID())

            let (requested, _) = try await client.send(
                "POST", "/me/ride", token: ann, body: RideAction.request(destination: bastille), mutationID: "t:1")
            #expect(requested == 200)
            let offer = try await bobRide.next()
            #expect(offer.value.phase == .incoming)
            #expect(offer.value.ride?.passenger == "ann")

            let (cancelled, data) = try await client.send("POST", "/me/ride", token: ann, body: RideAction.cancel, mutationID: "t:2")
            #expect(cancelled == 200)
            #expect(try JSONDecoder().decode(MutationReceipt.self, from: data).version == Version(epoch: 1, counter: 3))
            let withdrawn = try await bobRide.next()
            #expect(withdrawn.value == RideStatus.none)
            #expect(withdrawn.version.counter == offer.version.counter + 1)
            #expect(try await harness.truth().rideStatus(of: "bob") == withdrawn)
        }
    }

    @Test("the inactivity timer switches driver mode off and pushes it")
    func inactivityPushed() async throws {
        try await withNightride(.init(inactivityTimeout: .milliseconds(200), epoch: 1)) { harness, client in
            let bob = try await client.login("bob")
            let mode = client.pushes("/me/driver-mode/push", token: bob, as: Bool.self)
            defer { mode.close() }
            #expect(try await mode.next().value == false)
            let started = ContinuousClock.now
            _ = try await client.sender("/me/driver-mode", token: bob, as: DriverModeChange.self)(DriverModeChange(on: true), freshID())
            // Read up to the switch-off: the `true` between may be coalesced away when the
            // switch-off commits before the socket took it (200 ms on a loaded machine).
            var seen: [Versioned<Bool>] = []
            while seen.last.map({ $0.version.counter < 3 }) ?? true {
                seen.append(try await mode.next())
            }
            #expect(zip(seen, seen.dropFirst()).allSatisfy { $0.version < $1.version }, "versions out of order: \(seen)")
            #expect(seen.last == Versioned(false, version: Version(epoch: 1, counter: 3)))
            #expect(ContinuousClock.now - started >= .milliseconds(200))
            let records = try await harness.truth().changeLog.records(of: "bob")
            #expect(records.map(\.value).suffix(2) == [.driverMode(true), .driverMode(false)], "\(records)")
        }
    }

    @Test(
        "guessing: past its failures an account (in any case) waits from that address (429 with Retry-After) before any password is checked; a guessing address tries no new name"
    )
    func loginLimits() async throws {
        let clock = TestClock()
        let limits = SignInLimits.Policy(failuresPerPair: 5, failuresPerAddress: 8, window: .seconds(60))
        try await withNightride(.init(epoch: 1, loginLimits: limits, passwordCost: 4), clock: clock) { _, client in
            let (created, _) = try await client.send("POST", "/login", body: LoginRequest(name: "gus", password: "right"))
            #expect(created == 200)
            // Failures count per account: spelling the name in another case is no way around it.
            for spelling in ["gus", "GUS", "Gus", " gus", "gUS"] {
                let (status, _) = try await client.send("POST", "/login", body: LoginRequest(name: spelling, password: "wrong"))
                #expect(status == 401)
            }
            // The sixth, even with the right password, waits.
            let (limited, body) = try await client.send("POST", "/login", body: LoginRequest(name: "gUs", password: "right"))
            #expect(limited == 429)
            #expect(try JSONDecoder().decode(ErrorBody.self, from: body).error == "tooManyAttempts")
            // Successes never count: another name signs in as often as it likes.
            for _ in 1...10 {
                #expect(try await client.send("POST", "/login", body: LoginRequest(name: "hal", password: "pw")).0 == 200)
            }
            // Three failures under another name fill the address's eight: then a name that has not
            // signed in from it waits; hal, who has, does not (see LoginLimitsTests.noLockout).
            #expect(try await client.send("POST", "/login", body: LoginRequest(name: "ida", password: "x")).0 == 200)
            for _ in 1...3 {
                #expect(try await client.send("POST", "/login", body: LoginRequest(name: "ida", password: "wrong")).0 == 401)
            }
            #expect(try await client.send("POST", "/login", body: LoginRequest(name: "jo", password: "pw")).0 == 429)
            #expect(try await client.send("POST", "/login", body: LoginRequest(name: "hal", password: "pw")).0 == 200)
            // A minute later, the window has passed.
            await clock.advance(by: .seconds(61))
            #expect(try await client.send("POST", "/login", body: LoginRequest(name: "gus", password: "right")).0 == 200)
            #expect(try await client.send("POST", "/login", body: LoginRequest(name: "hal", password: "pw")).0 == 200)
        }
    }

    @Test("the seed's race: driver mode switches off while a slow GET is in flight; the push overtakes it, and versions tell")
    func seedRace() async throws {
        // The server's timers and the held-back answer run on a test clock, so the order of
        // events is the test's, however loaded the machine is.
        let clock = TestClock()
        let slow = FaultPlan(seed: 1, latency: .milliseconds(600)...(.milliseconds(600)), pushDropProbability: 0, disconnectAfter: nil)
        let configuration = NightrideServer.Configuration(inactivityTimeout: .milliseconds(150), epoch: 1)
        try await withNightride(configuration, faults: slow, faultsEnabled: false, clock: clock) { harness, client in
            let bob = try await client.login("bob")
            let mode = client.pushes("/me/driver-mode/push", token: bob, as: Bool.self)
            defer { mode.close() }
            #expect(try await mode.next().version.counter == 1)
            _ = try await client.sender("/me/driver-mode", token: bob, as: DriverModeChange.self)(DriverModeChange(on: true), freshID())
            #expect(try await mode.next().value == true)

            harness.faultsEnabled = true
            let arrivals = Mailbox<String>()
            async let pulled = client.pull("/me/driver-mode", token: bob, as: Bool.self)()
            // The GET has read v2 and its answer is held back for 600 ms of the server's time.
            #expect(await eventually(within: .seconds(20)) { harness.stats.requests["GET /me/driver-mode"] == 1 })
            // The held answer and the inactivity timer (the plan cuts no socket: no cut watch).
            #expect(await eventually(within: .seconds(20)) { clock.sleeperCount >= 2 }, "the GET's answer is held back")
            for _ in 0..<10 where try await harness.truth().driverMode(of: "bob")?.value == true {
                await clock.advance(by: .milliseconds(50))
            }
            let pushed = try await mode.next()
            arrivals.put("push")
            await clock.advance(by: .milliseconds(600))
            let response = try await pulled
            arrivals.put("response")

            #expect(pushed == Versioned(false, version: Version(epoch: 1, counter: 3)))
            #expect(response == Versioned(true, version: Version(epoch: 1, counter: 2)))
            #expect(arrivals.pending == ["push", "response"])
            #expect(Versioned<Bool>.outcome(of: response.version, over: pushed.version) == .outdated)
            #expect(try await harness.truth().changeLog.driverMode(of: "bob", at: harness.now) == pushed)
        }
    }

    @Test("a bad or missing token is a 401 on HTTP routes and on push upgrades")
    func unauthorized() async throws {
        try await withNightride { _, client in
            _ = try await client.login("ann")
            await #expect(throws: HTTPStatusError(status: 401)) {
                try await client.pull("/me/ride", token: "nope", as: RideStatus.self)()
            }
            for path in ["/me/driver-mode", "/me/ride", "/me/history", "/places?q=gare"] {
                let (status, body) = try await client.send("GET", path)
                #expect(status == 401, "\(path)")
                #expect(try JSONDecoder().decode(ErrorBody.self, from: body).error == "unauthorized")
            }
            let (posted, _) = try await client.send("POST", "/me/driver-mode", token: "nope", body: DriverModeChange(on: true))
            #expect(posted == 401)
            #expect(await client.upgradeIsRefused("/me/ride/push", token: "nope"))
            let (badLogin, _) = try await client.send("POST", "/login", body: LoginRequest(name: ""))
            #expect(badLogin == 400)
        }
    }

    @Test("history pages chain through next until null; places are searched")
    func historyAndPlaces() async throws {
        try await withNightride(.init(epoch: 1, passwordCost: 4), sampleHistory: true) { harness, client in
            let token = try await client.login("ann")
            #expect(try await harness.server.history(of: "ann").items.count == 10)
            var pages = [try await client.get("/me/history", token: token, as: HistoryPage.self)]
            while let next = pages.last?.next {
                pages.append(try await client.get(next, token: token, as: HistoryPage.self))
            }
            let all = try await harness.server.history(of: "ann", pageSize: 1_000).items
            #expect(pages.flatMap(\.items) == all)
            #expect(pages.count == (all.count + 9) / 10)
            let (badCursor, _) = try await client.send("GET", "/me/history?cursor=x", token: token)
            #expect(badCursor == 400)

            let places = try await client.get("/places?q=gare%20de", token: token, as: [Place].self)
            #expect(places.map(\.name) == ["Gare de l'Est", "Gare de Lyon"])
        }
    }

    @Test("a new account's history is the rides it took: empty at first, each finished ride stored for both users")
    func historyIsRidesTaken() async throws {
        try await withNightride { harness, client in
            let ann = try await client.login("ann")
            _ = try await client.login("bob")
            #expect(try await client.get("/me/history", token: ann, as: HistoryPage.self) == HistoryPage(items: [], next: nil))
            try await harness.server.setDriverMode(true, for: "bob")
            try await harness.server.perform(.request(destination: PlaceCatalog().search("gare", limit: 1)[0]), for: "ann")
            for (action, user) in [(RideAction.accept, "bob"), (.arrive, "bob"), (.finish, "bob")] {
                try await harness.server.perform(action, for: user)
            }
            let page = try await client.get("/me/history", token: ann, as: HistoryPage.self)
            #expect(page.items.map(\.passenger) == ["ann"] && page.items.map(\.driver) == ["bob"])
            #expect(try await harness.server.history(of: "bob").items == page.items)
        }
    }

    @Test("faults with a fixed seed are repeatable: the same 503s, the same lost pushes")
    func repeatableFaults() async throws {
        func scenario() async throws -> (statuses: [Int], received: [UInt64], dropped: Int) {
            var observed: (statuses: [Int], received: [UInt64], dropped: Int) = ([], [], 0)
            let failing = FaultPlan(
                seed: 2024, latency: .zero...(.milliseconds(2)), pushDropProbability: 0, disconnectAfter: nil, failureProbability: 0.3)
            try await withNightride(faults: failing, faultsEnabled: false) { harness, client in
                let bob = try await client.login("bob")
                let mode = client.pushes("/me/driver-mode/push", token: bob, as: Bool.self)
                defer { mode.close() }
                _ = try await mode.next()
                harness.faultsEnabled = true
                for _ in 0..<20 {
                    observed.statuses.append(try await client.send("GET", "/me/ride", token: bob).0)
                }
                harness.faultPlan = FaultPlan(seed: 2024, latency: .zero...(.zero), pushDropProbability: 0.5, disconnectAfter: nil)
                let send = client.sender("/me/driver-mode", token: bob, as: DriverModeChange.self)
                for index in 0..<12 {
                    let decided = harness.stats.pushesSent + harness.stats.pushesDropped
                    _ = try await send(DriverModeChange(on: index % 2 == 0), freshID())
                    // Each push's fate settled before the next change: two pushes waiting in the
                    // socket's outbox at once (a loaded machine) would be coalesced into one,
                    // and the lost pushes would no longer be the seed's alone.
                    let settled = await eventually(within: .seconds(10)) { harness.stats.pushesSent + harness.stats.pushesDropped > decided }
                    #expect(settled, "the push of change \(index) was neither sent nor dropped")
                }
                harness.faultsEnabled = false
                let last = try await send(DriverModeChange(on: true), freshID())
                while true {
                    let value = try await mode.next()
                    observed.received.append(value.version.counter)
                    if value.version == last { break }
                }
                observed.dropped = harness.stats.pushesDropped
            }
            return observed
        }
        let first = try await scenario()
        let second = try await scenario()
        #expect(first.statuses == second.statuses)
        #expect(first.received == second.received)
        #expect(first.statuses.contains(503) && first.statuses.contains(200))
        #expect(first.dropped > 0 && first.dropped < 12)
        #expect(first.received.count == 13 - first.dropped)
    }

    @Test("stop closes push sockets and frees the port; start reports a bound port")
    func startStop() async throws {
        var logger = Logger(label: "nightride.test")
        logger.logLevel = .error
        let server = NightrideServer(configuration: .init(epoch: 1), logger: logger)
        let port = try await server.start()
        #expect(port > 0)
        #expect(server.port == port)
        #expect(server.baseURL?.absoluteString == "http://127.0.0.1:\(port)")
        await #expect(throws: (any Error).self) { try await server.start() }
        let rival = NightrideServer(configuration: .init(port: port), logger: logger)
        await #expect(throws: (any Error).self) { try await rival.start() }  // the port is taken
        let client = LoopbackClient(port: port)
        let token = try await client.login("ann")
        let inbox = client.pushes("/me/ride/push", token: token, as: RideStatus.self)
        defer { inbox.close() }
        _ = try await inbox.next()
        #expect(server.openSockets == 1)
        await server.stop()
        #expect(server.openSockets == 0)
        #expect(server.port == nil)
        await #expect(throws: (any Error).self) { try await client.send("GET", "/me/ride", token: token) }
    }

    @Test("stop returns with no push socket open while many reconnect, and a start after it accepts them again")
    func stopWithManySockets() async throws {
        var logger = Logger(label: "nightride.test")
        logger.logLevel = .error
        // A graceful shutdown's bound far beyond the socket grace, so that a stop held by the
        // silent socket would take ten minutes.
        let server = NightrideServer(configuration: .init(epoch: 1, loginLimits: .scriptedClients, shutdownTimeout: .seconds(600)), logger: logger)
        let port = try await server.start()
        let client = LoopbackClient(port: port)
        var inboxes: [PushInbox<Bool>] = []
        defer { for inbox in inboxes { inbox.close() } }
        for user in 0..<12 {
            let token = try await client.login("user\(user)")
            let inbox = client.pushes("/me/driver-mode/push", token: token, as: Bool.self)
            _ = try await inbox.next()
            inboxes.append(inbox)
        }
        // A client that never answers the close: the stop cuts it off rather than wait.
        let silent = try SilentPushSocket(port: port, path: "/me/ride/push", token: try await client.login("frozen"))
        defer { silent.close() }
        #expect(await eventually(within: .seconds(10)) { server.openSockets == 13 }, "the silent socket never counted open")
        // Every other socket's client reconnects 50 ms after its close, some while the stop runs.
        let stopping = ContinuousClock.now
        await server.stop()
        #expect(server.openSockets == 0)
        // Held by the silent socket, the stop would take the 1 s grace plus the 600 s graceful
        // shutdown; cut off, about a second. The bound is a hang guard between the two.
        #expect(ContinuousClock.now - stopping < .seconds(120), "stopped after \(ContinuousClock.now - stopping)")

        // The same data, started again: its hub takes sockets again.
        _ = try await server.start()
        let again = LoopbackClient(port: try #require(server.port))
        // The process's HTTP client may still hold a connection to the stopped server whose
        // close it has not seen yet. A POST that meets it before a byte is written ("I/O on
        // closed channel") is sent again by the client; one written into it just as it closes
        // ("remote connection closed") may, in general, have reached a server, so a sign-in
        // is not repeated for the app: the user signs in again, as this test does.
        var signedIn: String?
        for attempt in 1...3 where signedIn == nil {
            do {
                signedIn = try await again.login("late")
            } catch  where attempt < 3 {
                try await Task.sleep(for: .milliseconds(100))
            }
        }
        let token = try #require(signedIn)
        let late = again.pushes("/me/driver-mode/push", token: token, as: Bool.self)
        defer { late.close() }
        #expect(try await late.next().value == false)
        await server.stop()
        #expect(server.openSockets == 0)
    }
}

/// The running server's timers on an injected clock, and the socket cuts of the fault plan.
@Suite("Nightride server timers and cuts", .timeLimit(.minutes(4)))
struct ServerTimerTests {
    @Test("on a test clock, the inactivity switch-off happens when the clock says, not the wall")
    func injectedClock() async throws {
        let clock = TestClock()
        var logger = Logger(label: "nightride.test")
        logger.logLevel = .error
        let harness = ServerHarness(configuration: .init(inactivityTimeout: .seconds(60), epoch: 1), clock: clock, logger: logger)
        let server = harness.server
        let port = try await server.start()
        defer { Task { await server.stop() } }
        let client = LoopbackClient(port: port)
        let bob = try await client.login("bob")
        let mode = client.pushes("/me/driver-mode/push", token: bob, as: Bool.self)
        defer { mode.close() }
        #expect(try await mode.next().value == false)
        _ = try await client.sender("/me/driver-mode", token: bob, as: DriverModeChange.self)(DriverModeChange(on: true), freshID())
        #expect(try await mode.next().value == true)

        await clock.advance(by: .seconds(59))
        #expect(try await harness.truth().driverMode(of: "bob")?.value == true)
        await clock.advance(by: .seconds(1))
        let off = try await mode.next()
        #expect(off == Versioned(false, version: Version(epoch: 1, counter: 3)))
        #expect(try await harness.truth().changeLog.records(of: "bob").last?.time == .seconds(60))
        #expect(server.now == .seconds(60))
        await server.stop()
    }

    @Test("the fault plan cuts push sockets; the client reconnects and gets the current value again")
    func forcedDisconnects() async throws {
        let cutting = FaultPlan(seed: 5, latency: .zero...(.zero), pushDropProbability: 0, disconnectAfter: .milliseconds(100)...(.milliseconds(150)))
        try await withNightride(.init(epoch: 1), faults: cutting) { harness, client in
            let ann = try await client.login("ann")
            let ride = client.pushes("/me/ride/push", token: ann, as: RideStatus.self)
            defer { ride.close() }
            let first = try await ride.next()
            let afterReconnection = try await ride.next()
            #expect(first == afterReconnection)
            #expect(harness.stats.forcedDisconnects >= 1)
            #expect(harness.stats.requests["GET /me/ride/push"].map { $0 >= 2 } == true)

            harness.faultsEnabled = false
            let cuts = harness.stats.forcedDisconnects
            // The lease of the socket open when the faults stopped may still cut it once (its
            // timer fires late on a loaded machine); after that none does: the client ends up
            // connected, however long it takes to reconnect, and stays so.
            var settled = false
            for _ in 0..<5 where !settled {
                #expect(await eventually(within: .seconds(10)) { harness.stats.openSockets == 1 })
                let before = harness.stats.forcedDisconnects
                try await Task.sleep(for: .milliseconds(500))
                settled = harness.stats.forcedDisconnects == before && harness.stats.openSockets == 1
            }
            #expect(settled, "the socket was still being cut after the faults stopped")
            #expect(harness.stats.forcedDisconnects <= cuts + 1)
        }
    }
}
