import Foundation
import NightrideModel
import StateLoopSync
import Testing

@testable import NightrideHarness
@testable import NightrideServer

/// The pure core with explicit times: no clock, no sockets.
@Suite("Nightride core")
struct RulesOracleTests {
    @Test("login creates a user at version 1 once; later logins keep the state and add a token")
    func login() throws {
        var core = RulesOracle(epoch: 7)
        let first = try core.join("  ann ", token: "a", at: .seconds(1))
        #expect(first == LoginResponse(token: "a", user: "ann"))
        #expect(core.driverMode(of: "ann") == Versioned(false, version: Fixture.version(1)))
        #expect(core.rideStatus(of: "ann") == Versioned(.none, version: Fixture.version(1)))
        _ = try core.setDriverMode(true, for: "ann", at: .seconds(2))
        _ = try core.join("ann", token: "b", at: .seconds(3))
        #expect(core.user(forToken: "a") == "ann")
        #expect(core.user(forToken: "b") == "ann")
        #expect(core.user(forToken: "c") == nil)
        #expect(core.driverMode(of: "ann")?.version == Fixture.version(2))
        #expect(core.userNames == ["ann"])
        let invalidName = RideRefusal(
            .invalidName, "a name has 1 to 40 characters (at most 160 bytes), none of them a control or invisible formatting character")
        #expect(throws: invalidName) { try core.join("   ", token: "x", at: .seconds(4)) }
    }

    @Test("names are bounded in bytes, composed (NFC) and free of control characters")
    func nameRules() throws {
        var core = RulesOracle(epoch: 7)
        let invalidName = RideRefusal(
            .invalidName, "a name has 1 to 40 characters (at most 160 bytes), none of them a control or invisible formatting character")
        // 40 characters, each a letter with 700 combining marks: 56 KB that counts as 40.
        let heavy = String(repeating: "a" + String(repeating: "\u{301}", count: 700), count: 40)
        #expect(heavy.count == 40)
        #expect(throws: invalidName) { try core.join(heavy, token: "h", at: .seconds(1)) }
        #expect(throws: invalidName) { try core.join("ann\u{7}", token: "b", at: .seconds(1)) }
        #expect(throws: invalidName) { try core.join("ann\u{202E}", token: "r", at: .seconds(1)) }
        // The two spellings of "zoé" are one user.
        _ = try core.join("zo\u{E9}", token: "c", at: .seconds(2))
        _ = try core.join("zoe\u{301}", token: "d", at: .seconds(3))
        #expect(core.userNames == ["zo\u{E9}"])
        #expect(core.user(forToken: "d") == "zo\u{E9}")
        // 40 three-byte characters (120 bytes) are a valid name.
        _ = try core.join(String(repeating: "\u{6771}", count: 40), token: "e", at: .seconds(4))
    }

    @Test("an account is created with a password and signed in to with it; a racing claim loses; names are one account whatever their case")
    func passwords() throws {
        var core = RulesOracle(epoch: 7)
        let wrong = RideRefusal(.wrongPassword, "wrong name or password")
        // No account without a password.
        #expect(throws: RideRefusal(.passwordRequired, "a new account needs a password")) {
            try core.login(name: "alice", token: "x0", proof: .none, at: .seconds(1))
        }
        #expect(core.userNames.isEmpty)
        // A new user with a password: created with it.
        _ = try core.login(name: "alice", token: "a1", proof: .sets(hash: "H1"), at: .seconds(1))
        #expect(core.passwordHash(of: " alice ") == "H1")
        _ = try core.login(name: "alice", token: "a2", proof: .matches(hash: "H1"), at: .seconds(2))
        #expect(core.user(forToken: "a2") == "alice")
        // Without the password, against another hash, or claiming it again: refused, no token.
        #expect(throws: wrong) { try core.login(name: "alice", token: "x1", proof: .none, at: .seconds(3)) }
        #expect(throws: wrong) { try core.login(name: "alice", token: "x2", proof: .matches(hash: "H2"), at: .seconds(3)) }
        #expect(throws: wrong) { try core.login(name: "alice", token: "x3", proof: .sets(hash: "H3"), at: .seconds(3)) }
        #expect(core.user(forToken: "x1") == nil && core.user(forToken: "x2") == nil && core.user(forToken: "x3") == nil)
        #expect(core.passwordHash(of: "alice") == "H1")

        // "ALICE" is alice: the same hash guards it, and the answer names the account as created.
        #expect(core.passwordHash(of: "ALICE") == "H1")
        #expect(try core.login(name: "ALICE", token: "a3", proof: .matches(hash: "H1"), at: .seconds(4)).user == "alice")
        #expect(core.user(forToken: "a3") == "alice")
        #expect(throws: wrong) { try core.login(name: "Alice", token: "x4", proof: .sets(hash: "H4"), at: .seconds(5)) }
        #expect(core.userNames == ["alice"])
        // Accents are folded by composition, not dropped: "élise" and "elise" are two accounts.
        _ = try core.login(name: "\u{C9}lise", token: "e1", proof: .sets(hash: "HE"), at: .seconds(6))
        #expect(core.passwordHash(of: "e\u{301}lise".uppercased()) == "HE")
        #expect(core.passwordHash(of: "elise") == nil)
        // The user's state survived all of it: still version 1.
        #expect(core.rideStatus(of: "alice")?.version == Version(epoch: 7, counter: 1))
    }

    @Test("a ride to a place that is not in the catalog is refused and changes nothing")
    func unknownPlace() throws {
        var core = try Fixture.world()
        let nowhere = Place(id: "atlantis", name: "Atlantis", area: "")
        #expect(throws: RideRefusal(.unknownPlace, "there is no place atlantis")) {
            try core.perform(.request(destination: nowhere), for: "ann", at: .seconds(1))
        }
        #expect(core.ride("ann") == RideStatus.none)
        #expect(core.rideStatus(of: "ann")?.version == Fixture.version(1))
    }

    @Test("the whole ride: request, offer, accept, arrive, finish, survey; every change one version up")
    func rideFlow() throws {
        var core = try Fixture.world()
        let pendingVersion = try core.perform(.request(destination: Fixture.bastille), for: "ann", at: .seconds(1))
        let asked = Ride(id: "r1", passenger: "ann", destination: Fixture.bastille)
        var offered = asked
        offered.driver = "bob"
        #expect(pendingVersion == Fixture.version(2))
        #expect(core.ride("ann") == .pending(asked))
        #expect(core.ride("bob") == .incoming(offered))
        #expect(core.rideStatus(of: "bob")?.version == Fixture.version(2))

        #expect(try core.perform(.accept, for: "bob", at: .seconds(2)) == Fixture.version(3))
        #expect(core.ride("ann") == .approaching(offered))
        #expect(core.ride("bob") == .approaching(offered))
        #expect(core.rideStatus(of: "ann")?.version == Fixture.version(3))

        #expect(try core.perform(.arrive, for: "bob", at: .seconds(3)) == Fixture.version(4))
        #expect(core.ride("ann") == .riding(offered))
        #expect(core.ride("bob") == .riding(offered))

        #expect(try core.perform(.finish, for: "bob", at: .seconds(4)) == Fixture.version(5))
        #expect(core.ride("ann") == .survey(offered))
        #expect(core.ride("bob") == RideStatus.none)
        #expect(core.rideStatus(of: "ann")?.version == Fixture.version(5))

        #expect(try core.perform(.finishSurvey, for: "ann", at: .seconds(5)) == Fixture.version(6))
        #expect(core.ride("ann") == RideStatus.none)
        #expect(core.mode("bob") == true)
        // In both histories, dated when it ended (at 4 s).
        var ended = offered
        ended.endedAt = Date(timeIntervalSince1970: 4)
        #expect(try core.history(of: "ann").items.first == ended)
        #expect(try core.history(of: "bob").items.first == ended)
    }

    @Test("a ride requested with no driver waits, and is offered when a driver switches on")
    func waitsForDriver() throws {
        var core = try Fixture.world(drivers: [])
        _ = try core.perform(.request(destination: Fixture.bastille), for: "ann", at: .seconds(1))
        #expect(core.ride("ann")?.phase == .pending)
        _ = try core.join("bob", token: "t-bob", at: .seconds(2))
        #expect(core.ride("bob") == RideStatus.none)
        _ = try core.setDriverMode(true, for: "bob", at: .seconds(3))
        #expect(core.ride("bob")?.phase == .incoming)
        #expect(core.ride("bob")?.ride?.driver == "bob")
        #expect(core.ride("ann")?.ride?.driver == nil)
    }

    @Test("rides are offered oldest first, to the driver idle the longest")
    func dispatchOrder() throws {
        var core = try Fixture.world(drivers: ["zoe", "bob"])
        _ = try core.setDriverMode(true, for: "zoe", at: .seconds(5))  // zoe acted later: bob waited longer
        _ = try core.join("cat", token: "t-cat", at: .seconds(6))
        _ = try core.perform(.request(destination: Fixture.bastille), for: "ann", at: .seconds(7))
        _ = try core.perform(.request(destination: Fixture.bastille), for: "cat", at: .seconds(8))
        #expect(core.ride("bob")?.ride?.passenger == "ann")
        #expect(core.ride("zoe")?.ride?.passenger == "cat")
    }

    @Test("actions that don't fit the status are refused and change nothing")
    func refusals() throws {
        var core = try Fixture.world()
        let before = core.changeLog.records.count
        func expectInvalid(_ action: RideAction, _ user: String, sourceLocation: SourceLocation = #_sourceLocation) {
            #expect(throws: RideRefusal.self, sourceLocation: sourceLocation) {
                try core.perform(action, for: user, at: .seconds(1))
            }
        }
        for action in [RideAction.cancel, .accept, .arrive, .finish, .finishSurvey] {
            expectInvalid(action, "ann")
        }
        #expect(core.changeLog.records.count == before)

        _ = try core.perform(.request(destination: Fixture.bastille), for: "ann", at: .seconds(2))
        expectInvalid(.request(destination: Fixture.bastille), "ann")
        expectInvalid(.accept, "ann")  // the passenger can't take their own ride
        expectInvalid(.cancel, "bob")  // only the passenger cancels
        expectInvalid(.arrive, "bob")  // not accepted yet
        _ = try core.perform(.accept, for: "bob", at: .seconds(3))
        expectInvalid(.arrive, "ann")
        expectInvalid(.finish, "bob")
        #expect(throws: RideRefusal(.driverBusy, "driver mode can't be switched off during a ride you drive")) {
            try core.setDriverMode(false, for: "bob", at: .seconds(4))
        }
        _ = try core.perform(.arrive, for: "bob", at: .seconds(5))
        expectInvalid(.cancel, "ann")  // too late once riding
        expectInvalid(.finishSurvey, "ann")
        #expect(throws: RideRefusal(.unknownUser, "no user nobody")) {
            try core.perform(.cancel, for: "nobody", at: .seconds(6))
        }
        let refusal = RideRefusal(.invalidTransition, "cancel is not possible while riding")
        #expect(refusal.body == ErrorBody(error: "invalidTransition", message: "cancel is not possible while riding"))
    }

    @Test("driver mode cannot go on while its user rides as a passenger: asked for, coming, under way; it can once the ride is over")
    func noDriverModeFromTheBackSeat() throws {
        var core = try Fixture.world()
        let refusal = RideRefusal(.passengerRiding, "driver mode can't be switched on while you ride as a passenger")
        #expect(refusal.status == .conflict)
        _ = try core.perform(.request(destination: Fixture.bastille), for: "ann", at: .seconds(1))
        let before = core.changeLog.records.count
        #expect(throws: refusal) { try core.setDriverMode(true, for: "ann", at: .seconds(2)) }
        _ = try core.perform(.accept, for: "bob", at: .seconds(3))
        #expect(throws: refusal) { try core.setDriverMode(true, for: "ann", at: .seconds(4)) }
        _ = try core.perform(.arrive, for: "bob", at: .seconds(5))
        #expect(throws: refusal) { try core.setDriverMode(true, for: "ann", at: .seconds(6)) }
        #expect(core.changeLog.records.count == before + 4, "only the driver's actions changed anything (each both rides)")
        #expect(core.driverMode(of: "ann")?.value == false)
        _ = try core.perform(.finish, for: "bob", at: .seconds(7))
        _ = try core.setDriverMode(true, for: "ann", at: .seconds(8))
        #expect(core.driverMode(of: "ann")?.value == true, "in the survey the ride is over")
    }

    @Test("the survey's rating, 1 to 5 stars, is kept with the ride in the passenger's history; another is refused and changes nothing")
    func rating() throws {
        var core = try Fixture.world()
        _ = try core.perform(.request(destination: Fixture.bastille), for: "ann", at: .seconds(1))
        _ = try core.perform(.accept, for: "bob", at: .seconds(2))
        _ = try core.perform(.arrive, for: "bob", at: .seconds(3))
        _ = try core.perform(.finish, for: "bob", at: .seconds(4))
        #expect(try core.history(of: "ann").items.first?.rating == nil)
        let refusal = RideRefusal(.invalidRating, "a ride is rated 1 to 5 stars, not 6")
        #expect(refusal.status == .badRequest)
        #expect(throws: refusal) { try core.perform(.rate(stars: 6), for: "ann", at: .seconds(5)) }
        #expect(throws: RideRefusal.self) { try core.perform(.rate(stars: 0), for: "ann", at: .seconds(5)) }
        #expect(core.ride("ann")?.phase == .survey)
        _ = try core.perform(.rate(stars: 4), for: "ann", at: .seconds(6))
        #expect(core.ride("ann") == RideStatus.none)
        let rated = try #require(try core.history(of: "ann").items.first)
        #expect(rated.rating == 4 && rated.destination == Fixture.bastille)
        #expect(try core.history(of: "bob").items.first?.rating == nil, "the driver's row is the driver's")
        #expect(throws: RideRefusal.self) { try core.perform(.rate(stars: 5), for: "ann", at: .seconds(7)) }
    }

    @Test("a passenger cancelling while offered or approaching changes the driver's state too")
    func cancelFreesDriver() throws {
        var core = try Fixture.world()
        _ = try core.perform(.request(destination: Fixture.bastille), for: "ann", at: .seconds(1))
        let bobBefore = try #require(core.rideStatus(of: "bob")?.version)
        _ = try core.perform(.cancel, for: "ann", at: .seconds(2))
        #expect(core.ride("ann") == RideStatus.none)
        #expect(core.ride("bob") == RideStatus.none)
        #expect(core.rideStatus(of: "bob")?.version == Version(epoch: bobBefore.epoch, counter: bobBefore.counter + 1))
        #expect(core.changeLog.records.last?.time == .seconds(2))

        _ = try core.perform(.request(destination: Fixture.bastille), for: "ann", at: .seconds(3))
        _ = try core.perform(.accept, for: "bob", at: .seconds(4))
        _ = try core.perform(.cancel, for: "ann", at: .seconds(5))
        #expect(core.ride("ann") == RideStatus.none)
        #expect(core.ride("bob") == RideStatus.none)
        #expect(core.mode("bob") == true)
    }

    @Test("a freed driver is offered the next waiting ride at once")
    func cancelRedispatches() throws {
        var core = try Fixture.world()
        _ = try core.join("cat", token: "t-cat", at: .zero)
        _ = try core.perform(.request(destination: Fixture.bastille), for: "ann", at: .seconds(1))
        _ = try core.perform(.request(destination: Fixture.bastille), for: "cat", at: .seconds(2))
        #expect(core.ride("cat")?.phase == .pending)
        _ = try core.perform(.cancel, for: "ann", at: .seconds(3))
        #expect(core.ride("bob")?.ride?.passenger == "cat")
    }

    @Test("an operation is one change per value: a driver freed and offered the next ride in one step is one version, one record")
    func oneVersionPerOperation() throws {
        var core = try Fixture.world()
        _ = try core.join("cat", token: "t-cat", at: .zero)
        _ = try core.perform(.request(destination: Fixture.bastille), for: "ann", at: .seconds(1))
        _ = try core.perform(.accept, for: "bob", at: .seconds(2))
        _ = try core.perform(.request(destination: Fixture.bastille), for: "cat", at: .seconds(3))
        let before = try #require(core.rideStatus(of: "bob"))
        let logged = core.changeLog.records.count
        // Bob goes from approaching ann to no ride to cat's offer within ann's cancel.
        _ = try core.perform(.cancel, for: "ann", at: .seconds(4))
        let after = try #require(core.rideStatus(of: "bob"))
        #expect(after.value.phase == .incoming && after.value.ride?.passenger == "cat")
        #expect(after.version == Version(epoch: before.version.epoch, counter: before.version.counter + 1))
        let records = core.changeLog.records[logged...].filter { $0.user == "bob" }
        #expect(records.map(\.version) == [after.version], "one record of bob's ride, the value he ends with")
        #expect(records.first?.value == .ride(after.value))
    }

    @Test("a user in driver mode who rides as a passenger is neither offered rides nor switched off meanwhile")
    func driverAsPassenger() throws {
        var core = try Fixture.world(drivers: ["bob", "zoe"], timeout: .seconds(60))
        _ = try core.perform(.request(destination: Fixture.bastille), for: "bob", at: .seconds(1))
        // Bob's own request goes to zoe, the other driver; ann's then waits rather than going to bob.
        #expect(core.ride("zoe")?.ride?.passenger == "bob")
        _ = try core.perform(.request(destination: Fixture.bastille), for: "ann", at: .seconds(2))
        #expect(core.ride("bob")?.phase == .pending)
        #expect(core.ride("ann")?.phase == .pending)
        // Zoe drives bob; long past the timeout bob is still in driver mode: he has a ride.
        _ = try core.perform(.accept, for: "zoe", at: .seconds(3))
        core.expireInactiveDrivers(at: .seconds(200))
        #expect(core.mode("bob") == true)
        #expect(core.nextInactivityDeadline == nil, "nobody is idle: zoe drives, bob rides, ann waits")
        // Zoe, freed, gets ann's ride: bob is still a passenger (his survey), so not a candidate.
        _ = try core.perform(.arrive, for: "zoe", at: .seconds(201))
        _ = try core.perform(.finish, for: "zoe", at: .seconds(202))
        #expect(core.ride("zoe")?.ride?.passenger == "ann")
        #expect(core.ride("bob")?.phase == .survey)
        _ = try core.perform(.finishSurvey, for: "bob", at: .seconds(203))
        #expect(core.ride("bob") == RideStatus.none)
        #expect(core.mode("bob") == true)
    }

    @Test("switching driver mode off withdraws an offer, which goes to the next driver")
    func switchOffWithdrawsOffer() throws {
        var core = try Fixture.world(drivers: ["bob", "zoe"])
        _ = try core.perform(.request(destination: Fixture.bastille), for: "ann", at: .seconds(1))
        #expect(core.ride("bob")?.phase == .incoming)
        _ = try core.setDriverMode(false, for: "bob", at: .seconds(2))
        #expect(core.ride("bob") == RideStatus.none)
        #expect(core.mode("bob") == false)
        #expect(core.ride("zoe")?.ride?.passenger == "ann")
        #expect(core.ride("ann")?.phase == .pending)
    }

    @Test("the same mutation id is applied once and answered alike, refusals included")
    func idempotence() throws {
        var core = try Fixture.world()
        let first = try core.setDriverMode(false, for: "bob", mutationID: "m1", at: .seconds(1))
        _ = try core.setDriverMode(true, for: "bob", mutationID: "m2", at: .seconds(2))
        let replay = try core.setDriverMode(false, for: "bob", mutationID: "m1", at: .seconds(3))
        #expect(first == replay)
        #expect(core.mode("bob") == true)  // m1 was not applied again

        let request = try core.perform(.request(destination: Fixture.bastille), for: "ann", mutationID: "r", at: .seconds(4))
        let count = core.changeLog.records.count
        #expect(try core.perform(.request(destination: Fixture.bastille), for: "ann", mutationID: "r", at: .seconds(5)) == request)
        #expect(core.changeLog.records.count == count)

        #expect(throws: RideRefusal.self) { try core.perform(.finish, for: "ann", mutationID: "bad", at: .seconds(6)) }
        _ = try core.perform(.cancel, for: "ann", at: .seconds(7))
        // Still the first answer, though finishing would now be as invalid for another reason.
        #expect(throws: RideRefusal(.invalidTransition, "finish is not possible while pending")) {
            try core.perform(.finish, for: "ann", mutationID: "bad", at: .seconds(8))
        }
        // Ids are per user: bob's "r" is a new mutation.
        #expect(throws: RideRefusal.self) { try core.perform(.cancel, for: "bob", mutationID: "r", at: .seconds(9)) }
    }

    @Test("driver mode switches itself off after the timeout without a driver action, and only then")
    func inactivity() throws {
        var core = try Fixture.world(timeout: .seconds(60))
        #expect(core.nextInactivityDeadline == .seconds(60))
        core.expireInactiveDrivers(at: .seconds(29))
        #expect(core.mode("bob") == true)
        _ = try core.setDriverMode(true, for: "bob", at: .seconds(30))  // a keep-alive, no new version
        #expect(core.driverMode(of: "bob")?.version == Fixture.version(2))
        #expect(core.nextInactivityDeadline == .seconds(90))
        core.expireInactiveDrivers(at: .seconds(89))
        #expect(core.mode("bob") == true)
        core.expireInactiveDrivers(at: .seconds(90))
        #expect(core.driverMode(of: "bob") == Versioned(false, version: Fixture.version(3)))
        #expect(core.changeLog.records.last == ChangeRecord(time: .seconds(90), user: "bob", version: Fixture.version(3), value: .driverMode(false)))
        #expect(core.nextInactivityDeadline == nil)
    }

    @Test("any operation applies the switch-offs already due, whoever calls it")
    func inactivityBeforeOperations() throws {
        var core = try Fixture.world(drivers: ["bob", "zoe"], timeout: .seconds(60))
        _ = try core.setDriverMode(true, for: "zoe", at: .seconds(50))
        // bob is overdue at 70; the request must not be offered to him.
        _ = try core.perform(.request(destination: Fixture.bastille), for: "ann", at: .seconds(70))
        #expect(core.mode("bob") == false)
        #expect(core.ride("zoe")?.phase == .incoming)
    }

    @Test("an ignored offer ends with driver mode off and the ride back in the queue; driving keeps it on")
    func inactivityWithdrawsOffer() throws {
        var core = try Fixture.world(timeout: .seconds(60))
        _ = try core.perform(.request(destination: Fixture.bastille), for: "ann", at: .seconds(10))
        core.expireInactiveDrivers(at: .seconds(60))
        #expect(core.mode("bob") == false)
        #expect(core.ride("bob") == RideStatus.none)
        #expect(core.ride("ann")?.phase == .pending)

        _ = try core.setDriverMode(true, for: "bob", at: .seconds(61))
        _ = try core.perform(.accept, for: "bob", at: .seconds(62))
        core.expireInactiveDrivers(at: .seconds(1_000))
        #expect(core.mode("bob") == true)  // approaching is not idle
        #expect(core.nextInactivityDeadline == nil)
        _ = try core.perform(.arrive, for: "bob", at: .seconds(1_001))
        _ = try core.perform(.finish, for: "bob", at: .seconds(1_002))
        #expect(core.nextInactivityDeadline == .seconds(1_062))
    }

    @Test("the change log answers what a user's state was at any time")
    func changeLogLookups() throws {
        var core = try Fixture.world(timeout: .seconds(60))
        _ = try core.join("cat", token: "t-cat", at: .seconds(5))
        _ = try core.perform(.request(destination: Fixture.bastille), for: "ann", at: .seconds(10))
        _ = try core.perform(.accept, for: "bob", at: .seconds(20))
        let log = core.changeLog

        #expect(log.snapshot(of: "cat", at: .seconds(4)) == nil)
        #expect(log.snapshot(of: "cat", at: .seconds(5))?.driverMode.value == false)
        #expect(log.rideStatus(of: "ann", at: .seconds(9)) == Versioned(.none, version: Fixture.version(1)))
        #expect(log.rideStatus(of: "ann", at: .seconds(10))?.value.phase == .pending)
        #expect(log.rideStatus(of: "ann", at: .seconds(19))?.value.phase == .pending)
        #expect(log.rideStatus(of: "ann", at: .seconds(20))?.value.phase == .approaching)
        #expect(log.driverMode(of: "bob", at: .seconds(15)) == Versioned(true, version: Fixture.version(2)))
        #expect(log.rideStatus(of: "bob", at: .seconds(15))?.value.phase == .incoming)
        #expect(log.rideStatus(of: "bob", at: .seconds(15))?.version == Fixture.version(2))
        #expect(log.snapshot(of: "bob", at: .seconds(100)) == core.snapshot(of: "bob"))
        #expect(log.records(of: "ann").map(\.time) == [.zero, .zero, .seconds(10), .seconds(20)])
        #expect(log.records.map(\.time) == log.records.map(\.time).sorted())
    }

    @Test("history pages go newest first, ten at a time, with a path to the next page")
    func history() throws {
        var core = try Fixture.world()
        let total = try #require(core.world.histories["ann"]?.count)
        #expect((15...30).contains(total))
        var pages: [HistoryPage] = [try core.history(of: "ann")]
        while let next = pages.last?.next {
            let cursor = try #require(next.split(separator: "=").last.map(String.init))
            #expect(next == "/me/history?cursor=\(cursor)")
            pages.append(try core.history(of: "ann", cursor: cursor))
        }
        #expect(pages.dropLast().allSatisfy { $0.items.count == 10 })
        let items = pages.flatMap(\.items)
        #expect(items.count == total)
        #expect(Set(items.map(\.id)).count == total)
        #expect(items.first?.id == "h\(total)-ann")
        #expect(items.last?.id == "h1-ann")
        #expect(items.allSatisfy { $0.passenger == "ann" || $0.driver == "ann" })
        #expect(throws: RideRefusal.self) { try core.history(of: "ann", cursor: "abc") }
        #expect(throws: RideRefusal.self) { try core.history(of: "ann", cursor: "\(total + 1)") }

        // A new ride goes on top; a cursor handed out before still gives the same page.
        let second = try #require(pages.first?.next?.split(separator: "=").last.map(String.init))
        let before = try core.history(of: "ann", cursor: second)
        _ = try core.perform(.request(destination: Fixture.bastille), for: "ann", at: .seconds(1))
        _ = try core.perform(.accept, for: "bob", at: .seconds(2))
        _ = try core.perform(.arrive, for: "bob", at: .seconds(3))
        _ = try core.perform(.finish, for: "bob", at: .seconds(4))
        #expect(try core.history(of: "ann").items.first?.id == "r1")
        #expect(try core.history(of: "ann", cursor: second) == before)
        // The same user gets the same invented past in another world.
        #expect(try Fixture.world().history(of: "ann") == pages.first)
    }

    @Test("a time earlier than one already seen doesn't make the log go back")
    func monotonicTime() throws {
        var core = try Fixture.world()
        core.expireInactiveDrivers(at: .seconds(10))
        _ = try core.setDriverMode(false, for: "bob", at: .seconds(5))
        #expect(core.changeLog.records.last?.time == .seconds(10))
    }

    @Test("a Mutation-ID used for another change is refused (409), not answered with the first answer")
    func mutationIDReused() throws {
        var core = RulesOracle(epoch: 7)
        _ = try core.join("ann", token: "a", at: .seconds(1))
        let first = try core.setDriverMode(true, for: "ann", mutationID: "c:1", at: .seconds(2))
        #expect(try core.setDriverMode(true, for: "ann", mutationID: "c:1", at: .seconds(3)) == first)
        let reused = RideRefusal(.mutationIDReused, "Mutation-ID c:1 was used for another change")
        #expect(throws: reused) { try core.setDriverMode(false, for: "ann", mutationID: "c:1", at: .seconds(4)) }
        #expect(throws: reused) { try core.perform(.cancel, for: "ann", mutationID: "c:1", at: .seconds(4)) }
        #expect(core.driverMode(of: "ann")?.value == true)
    }

    @Test("remembered answers are forgotten once the client sends a later mutation, not by a count")
    func answersPrunedByLastMutationID() throws {
        var core = RulesOracle(epoch: 7)
        _ = try core.join("ann", token: "a", at: .seconds(1))
        for sequence in 1...3 {
            _ = try core.setDriverMode(sequence % 2 == 1, for: "ann", mutationID: "c:\(sequence)", at: .seconds(2))
        }
        _ = try core.setDriverMode(true, for: "ann", mutationID: "d:9", at: .seconds(3))
        // c:3 and d:9 are remembered; c:1 and c:2 were answered before c:3 was sent.
        #expect(Set(core.rememberedMutationIDs(of: "ann")) == ["c:3", "d:9"])
        // A retry of the newest is still answered alike, without applying again.
        let version = core.driverMode(of: "ann")?.version
        _ = try core.setDriverMode(true, for: "ann", mutationID: "c:3", at: .seconds(4))
        #expect(core.driverMode(of: "ann")?.version == version)
    }
}
