import Foundation
import NightrideClient
import NightrideModel
import StateLoopSync
import Testing

@testable import NightrideHarness
@testable import NightrideServer

/// The JSON shapes clients depend on, and the pure helpers behind the routes.
@Suite("Nightride wire format and helpers")
struct WireFormatTests {
    let ride = Ride(id: "r1", passenger: "ann", driver: "bob", destination: Fixture.bastille)

    /// `value` as the kit stores and serves it: keys sorted.
    func json(_ value: some Encodable) throws -> String {
        let encoder = JSONEncoder()
        encoder.outputFormatting = .sortedKeys
        return String(decoding: try encoder.encode(value), as: UTF8.self)
    }

    @Test("a versioned ride status is {version, value}, the status a phase and a ride")
    func versionedRideStatus() throws {
        let text = try json(Versioned(RideStatus.riding(ride), version: Version(epoch: 3, counter: 9)))
        #expect(
            text
                == #"{"value":{"phase":"riding","ride":{"destination":{"area":"Paris 11e","id":"bastille","name":"Bastille"},"driver":"bob","id":"r1","passenger":"ann"}},"version":{"counter":9,"epoch":3}}"#
        )
        #expect(try json(RideStatus.none) == #"{"phase":"none"}"#)
        for status in [RideStatus.none, .pending(ride), .incoming(ride), .approaching(ride), .riding(ride), .survey(ride)] {
            #expect(try JSONDecoder().decode(RideStatus.self, from: Data(json(status).utf8)) == status)
        }
        #expect(throws: DecodingError.self) { try JSONDecoder().decode(RideStatus.self, from: Data(#"{"phase":"riding"}"#.utf8)) }
        #expect(throws: DecodingError.self) { try JSONDecoder().decode(RideStatus.self, from: Data(#"{"phase":"flying"}"#.utf8)) }
    }

    @Test("ride actions are {action} with a destination for requests")
    func rideActions() throws {
        #expect(try json(RideAction.finishSurvey) == #"{"action":"finishSurvey"}"#)
        #expect(
            try json(RideAction.request(destination: Fixture.bastille))
                == #"{"action":"request","destination":{"area":"Paris 11e","id":"bastille","name":"Bastille"}}"#)
        for action in [RideAction.request(destination: Fixture.bastille), .cancel, .accept, .arrive, .finish, .finishSurvey] {
            #expect(try JSONDecoder().decode(RideAction.self, from: Data(json(action).utf8)) == action)
        }
        #expect(try json(DriverModeChange(on: true)) == #"{"on":true}"#)
        #expect(try json(MutationReceipt(version: Version(epoch: 1, counter: 2))) == #"{"version":{"counter":2,"epoch":1}}"#)
    }

    @Test("place search ignores case and accents and matches the area too")
    func placeSearch() {
        let catalog = PlaceCatalog()
        #expect(catalog.places.count == 30)
        #expect(Set(catalog.places.map(\.id)).count == 30)
        #expect(catalog.search("opera").map(\.name) == ["Opéra"])
        #expect(catalog.search("GARE").count == 5)
        #expect(catalog.search("seine-saint").map(\.name) == ["Saint-Denis", "Montreuil"])
        #expect(catalog.search("  ").isEmpty)
        #expect(catalog.search("a", limit: 3).count == 3)
        #expect(catalog.place(id: "champs-elysees")?.name == "Champs-Élysées")
    }

    @Test("fault decisions depend on the seed and on what they concern only")
    func faultPlanIsRepeatable() {
        let plan = FaultPlan(seed: 42, latency: .milliseconds(10)...(.milliseconds(50)), pushDropProbability: 0.3)
        let same = FaultPlan(seed: 42, latency: .milliseconds(10)...(.milliseconds(50)), pushDropProbability: 0.3)
        let other = FaultPlan(seed: 43, latency: .milliseconds(10)...(.milliseconds(50)), pushDropProbability: 0.3)
        let latencies = (1...50).map { plan.latency(ofRequest: $0, on: "GET /me/ride") }
        #expect(latencies == (1...50).map { same.latency(ofRequest: $0, on: "GET /me/ride") })
        #expect(latencies != (1...50).map { other.latency(ofRequest: $0, on: "GET /me/ride") })
        #expect(latencies.allSatisfy { (.milliseconds(10)...(.milliseconds(50))).contains($0) })
        #expect(Set(latencies).count > 40)  // spread, so responses overtake each other

        let drops = (1...200).map { plan.dropsPush(of: Version(epoch: 1, counter: UInt64($0)), resource: .ride, user: "ann", connection: 1) }
        let dropsNextEpoch = (1...200).map { plan.dropsPush(of: Version(epoch: 2, counter: UInt64($0)), resource: .ride, user: "ann", connection: 1) }
        #expect(drops == dropsNextEpoch)
        #expect((40...80).contains(drops.filter { $0 }.count))
        #expect(drops != (1...200).map { other.dropsPush(of: Version(epoch: 1, counter: UInt64($0)), resource: .ride, user: "ann", connection: 1) })

        let leases = (1...20).compactMap { plan.disconnectDelay(user: "ann", resource: .ride, connection: $0, round: 1) }
        #expect(leases.count == 20)
        #expect(leases.allSatisfy { (.seconds(5)...(.seconds(20))).contains($0) })
        #expect(FaultPlan(seed: 1, disconnectAfter: nil).disconnectDelay(user: "ann", resource: .ride, connection: 1, round: 1) == nil)
        #expect((1...100).allSatisfy { !plan.fails(request: $0, on: "GET /me/ride") })
    }
}
