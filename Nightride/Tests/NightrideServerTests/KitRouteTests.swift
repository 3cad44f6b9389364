import Foundation
import NightrideHarness
import NightrideModel
import StateLoopSync
import StateLoopSyncTransports
import StateLoopWire
import TestSupport
import Testing

@testable import NightrideServer

/// What Nightride takes from the server kit: its JSON routes and its skipping of unchanged
/// writes, each where Nightride's behaviour depends on it.
@Suite("Nightride on the kit's routes and writes", .timeLimit(.minutes(5)))
struct KitRouteTests {
    @Test(
        "a sign-in body is read up to 64 KiB, not the server's limit for mutations: beyond it 413 bodyTooLarge with the kit's ErrorBody; malformed JSON 400 badRequest"
    )
    func loginBodyLimit() async throws {
        try await withNightride { _, client in
            let login = Data(#"{"name":"ann","password":"ann-pw"}"#.utf8)
            func padded(to size: Int) -> Data {
                login + Data(repeating: UInt8(ascii: " "), count: size - login.count)
            }
            let limit = NightrideServer.maximumLoginBodyBytes
            #expect(limit == 64 * 1024)
            let (atLimit, accepted) = try await client.raw("POST", "/login", body: padded(to: limit))
            #expect(atLimit == 200, "\(String(decoding: accepted, as: UTF8.self))")
            #expect(try JSONDecoder().decode(LoginResponse.self, from: accepted).user == "ann")

            let (beyond, refusal) = try await client.raw("POST", "/login", body: padded(to: limit + 1))
            #expect(beyond == 413)
            let error = try JSONDecoder().decode(ErrorBody.self, from: refusal)
            #expect(error.error == "bodyTooLarge")
            #expect(error.message == "a request body has at most 65536 bytes")

            let (malformed, complaint) = try await client.raw("POST", "/login", body: Data(#"{"name":"#.utf8))
            #expect(malformed == 400)
            #expect(try JSONDecoder().decode(ErrorBody.self, from: complaint).error == "badRequest")
        }
    }

    @Test("an operation that sets a value and sets it back pushes nothing: the next push is the next real change, at the next version")
    func setAndSetBackPushesNothing() async throws {
        try await withNightride(.init(epoch: 1, loginLimits: .scriptedClients, passwordCost: 4)) { harness, client in
            let bob = try await client.login("bob")
            let mode = client.pushes("/me/driver-mode/push", token: bob, as: Bool.self)
            defer { mode.close() }
            #expect(try await mode.next() == Versioned(false, version: Version(epoch: 1, counter: 1)))

            let (sync, rules) = (try await harness.server.openData().sync, harness.server.rules)
            try await sync.update { transaction in
                try StoreWorld.operate(in: transaction, at: harness.server.wallNow, rules: rules) { operation in
                    try operation.world.setDriverMode(true, for: "bob")
                    try operation.world.setDriverMode(false, for: "bob")
                }
            }
            _ = try await client.sender("/me/driver-mode", token: bob, as: DriverModeChange.self)(DriverModeChange(on: true), freshID())
            // Had the operation written its unchanged value, it would have been version 2 (and
            // pushed); the switch on would be 3.
            #expect(try await mode.next() == Versioned(true, version: Version(epoch: 1, counter: 2)))
            #expect(try await harness.truth().changeLog.records(of: "bob").map(\.value) == [.driverMode(false), .ride(.none), .driverMode(true)])
        }
    }
}
