import Foundation
import NIOCore
import ServerTestApp
import StateLoopServerTesting
import StateLoopWire
import TestSupport
import Testing

@testable import StateLoopServer

/// What a push socket's client can make the server hold or do: bytes it does not read, frames
/// it floods, frames that break the protocol. Every wait is bounded; time bounds are hang
/// guards, generous enough for a machine shared with other builds.
@Suite("Sync server: what a push socket's client may cost", .timeLimit(.minutes(5)))
struct PushLimitsTests {
    @Test(
        "a socket that never reads holds no more than the bytes in flight: its pushes coalesce and it is cut after the slow-reader timeout, while a reader beside it gets every newest value"
    )
    func silentSocketCutWithinTimeout() async throws {
        let configuration = SyncServerConfiguration(slowReaderTimeout: .milliseconds(500))
        try await withNotesServer(configuration: configuration) { server, client in
            _ = try await server.update { try $0.write("", to: Notes.pages, "main") }
            let silent = try SilentSocket(port: client.port, path: "pages/push", token: "t-ann")
            defer { silent.close() }
            #expect(await eventually(within: .seconds(10)) { server.openSockets == 1 }, "the silent socket did not open")
            let reader = TestPushSocket(port: client.port, path: "pages/push", as: "bob")
            defer { reader.cancel() }
            #expect(await eventually(within: .seconds(10)) { reader.values(String.self).count == 1 }, "the reader got no first value")
            // Up to 48 pages of 8 KB: 384 KB, six times the bytes in flight allowed, and well
            // under what Linux's send buffer takes on loopback when it sizes itself (over a
            // megabyte): without the bound they all sit in the kernel, the channel never stops
            // being writable, and the socket waits for the dead-peer timeout (a minute). Each
            // page waits for the reader to get it, so that a busy event loop does not coalesce
            // pages before they reach the silent socket (then too few bytes would be sent).
            // A loaded machine may still coalesce some (CI saw 45 of 48 coalesced, the silent
            // socket never past its bytes in flight): pages go on, up to 400, until it is cut.
            let pages = (1...400).map { "\($0):" + String(repeating: "\($0 % 10)", count: 8_000) }
            var sent = 0
            for page in pages where server.openSockets == 2 {
                _ = try await server.update { try $0.write(page, to: Notes.pages, "main") }
                sent += 1
                let reached = await eventually(within: .seconds(10)) { reader.values(String.self).last?.value == page }
                #expect(reached, "the reader did not get page \(sent)")
                if sent >= 48 {
                    // Past six times the bytes in flight: give the cut its moment before more.
                    _ = await eventually(within: .milliseconds(700)) { server.openSockets == 1 }
                }
            }
            let cut = await eventually(within: .seconds(10)) { server.openSockets == 1 }
            #expect(cut, "the silent socket was still open 10 s after \(sent) pages (slow-reader timeout 500 ms)")
            #expect(await silent.waitForEnd(within: .seconds(30)), "the silent socket's connection stayed open")
            let metrics = server.renderedMetrics
            #expect(metrics.contains("stateloop_slow_readers_closed_total 1"), "\(metrics)")
            // Whether some of its pushes coalesced before the cut depends on the machine's load
            // (a slow reader is cut 500 ms after its channel stops being writable); that it is
            // cut, and its reader beside it served, does not.
            // The reader beside it got the newest page, its versions in order.
            #expect(
                await eventually(within: .seconds(10)) { reader.values(String.self).last?.value == pages[sent - 1] },
                "the reader missed the last page")
            let counters = reader.values(String.self).map(\.version.counter)
            #expect(counters == counters.sorted() && Set(counters).count == counters.count, "\(counters)")
            _ = try await server.update { try $0.write("after", to: Notes.pages, "main") }
            #expect(await eventually(within: .seconds(10)) { reader.values(String.self).last?.value == "after" }, "the reader is no longer served")
        }
    }

    @Test("a client that floods pings is closed with 1008 (policy violation) after its allowance, while another client's requests are answered")
    func pingFloodClosed() async throws {
        try await withNotesServer { server, client in
            _ = try await server.update { try $0.write(7, to: Notes.board, "main") }
            let flooder = try RawConnection(port: client.port)
            #expect(flooder.send(RawFrames.upgrade("board/push", token: "t-mal")), "the upgrade could not be sent")
            let head = await flooder.read(through: "\r\n\r\n", within: .seconds(30))
            #expect(
                head.map { String(decoding: $0, as: UTF8.self) }?.hasPrefix("HTTP/1.1 101") == true,
                "not upgraded: \(head.map { String(decoding: $0, as: UTF8.self) } ?? "nothing")")
            // 5,000 pings at once, where the default allows 10 a second and 20 at once. The
            // server may close before it took them all, so what was sent is not checked.
            let ping = RawFrames.client(RawFrames.ping, Array("are you there".utf8))
            _ = await flooder.send(Array(repeatElement(ping, count: 5_000).joined()), within: .seconds(30))
            // Another client's request is answered, and right.
            let asked = ContinuousClock.now
            let (status, body) = try await client.send("GET", "board", as: "bob")
            #expect(
                status == 200 && String(decoding: body, as: UTF8.self).contains("\"value\":7"), "\(status) \(String(decoding: body, as: UTF8.self))")
            #expect(ContinuousClock.now - asked < .seconds(60), "the request took \(ContinuousClock.now - asked)")
            let (bytes, closed) = await flooder.readBytesUntilClosed(within: .seconds(30))
            #expect(closed, "the flooding socket was still open after 30 s")
            let frames = RawFrames.server(bytes)
            #expect(frames.contains { $0.closeCode == 1008 }, "no close 1008: \(frames.suffix(3))")
            // Answered within its allowance (20 at once, then 10 a second), not 5,000 times; the
            // bound leaves room for a stalled event loop's refill.
            let pongs = frames.filter { $0.opcode == RawFrames.pong }.count
            #expect(pongs < 100, "\(pongs) pongs answered")
            #expect(server.renderedMetrics.contains("stateloop_flooding_clients_closed_total 1"), "\(server.renderedMetrics)")
            #expect(await eventually(within: .seconds(10)) { server.openSockets == 0 }, "the flooding socket still counts as open")
        }
    }

    @Test("a client that pings and never reads its pongs is cut as a slow reader, and the server holds no more than the bytes in flight for it")
    func unreadPongsCut() async throws {
        var configuration = SyncServerConfiguration(slowReaderTimeout: .milliseconds(500))
        // The flood limit is the test above's: here the pings come within it.
        configuration.maximumClientFramesPerSecond = 1_000_000
        try await withNotesServer(configuration: configuration) { server, client in
            let pinger = try RawConnection(port: client.port, receiveBufferBytes: 4_096)
            #expect(pinger.send(RawFrames.upgrade("me/notes/push", token: "t-pia")), "the upgrade could not be sent")
            let head = await pinger.read(through: "\r\n\r\n", within: .seconds(30))
            #expect(head.map { String(decoding: $0, as: UTF8.self) }?.hasPrefix("HTTP/1.1 101") == true, "not upgraded")
            let key = ResourceKey(resource: "notes", id: "pia")
            #expect(await eventually(within: .seconds(10)) { server.hub.writers(following: key).count == 1 }, "the socket did not register")
            let channel = try #require(server.hub.writers(following: key).first).channel
            // What the server holds for the socket, sampled until it is closed: its channel's
            // buffer, and the kernel's send buffer as the kernel sizes it.
            let sampler = Task {
                var most = (channel: 0, kernel: 0)
                while !Task.isCancelled {
                    guard let buffered = try? await channel.getOption(ChannelOptions.bufferedWritableBytes).get(),
                        let kernel = try? await channel.getOption(ChannelOptions.socketOption(.so_sndbuf)).get()
                    else { break }
                    most = (max(most.channel, buffered), max(most.kernel, Int(kernel)))
                    try? await Task.sleep(for: .milliseconds(2))
                }
                return most
            }
            // 4,000 pings of 125 bytes: half a megabyte of pongs, eight times the bytes in flight.
            let ping = RawFrames.client(RawFrames.ping, [UInt8](repeating: 0x70, count: 125))
            _ = await pinger.send(Array(repeatElement(ping, count: 4_000).joined()), within: .seconds(30))
            let cut = await eventually(within: .seconds(10)) { server.openSockets == 0 }
            #expect(cut, "the socket that does not read its pongs was still open")
            sampler.cancel()
            let most = await sampler.value
            #expect(server.renderedMetrics.contains("stateloop_slow_readers_closed_total 1"), "\(server.renderedMetrics)")
            // The channel stops taking pongs at half the bytes in flight (one frame may pass
            // the mark); the kernel's buffer is set to the other half.
            let bound = configuration.pushBytesInFlight
            #expect(most.channel <= bound / 2 + 1_024, "the channel held \(most.channel) bytes")
            #expect(most.kernel <= bound, "the kernel's send buffer grew to \(most.kernel) bytes")
            #expect(await pinger.readBytesUntilClosed(within: .seconds(30)).closed, "the connection stayed open")
        }
    }

    @Test("frames that break RFC 6455 close the socket with 1002 (protocol error): unmasked, a reserved bit set, a reserved opcode")
    func protocolErrorsClose() async throws {
        try await withNotesServer { server, client in
            let hello = Array("hello".utf8)
            let broken: [(name: String, frame: [UInt8])] = [
                ("an unmasked ping", RawFrames.client(RawFrames.ping, hello, masked: false)),
                ("an unmasked text frame", RawFrames.client(RawFrames.text, hello, masked: false)),
                ("a ping with RSV1 set", RawFrames.client(RawFrames.ping, hello, reserved: 0x40)),
                ("a text frame with RSV3 set", RawFrames.client(RawFrames.text, hello, reserved: 0x10)),
                ("reserved data opcode 0x3", RawFrames.client(0x3, hello)),
                ("reserved control opcode 0xB", RawFrames.client(0xB, hello)),
            ]
            for (index, (name, frame)) in broken.enumerated() {
                let connection = try RawConnection(port: client.port)
                #expect(connection.send(RawFrames.upgrade("board/push", token: "t-user-\(index)")), "\(name): the upgrade could not be sent")
                let head = await connection.read(through: "\r\n\r\n", within: .seconds(30))
                #expect(head.map { String(decoding: $0, as: UTF8.self) }?.hasPrefix("HTTP/1.1 101") == true, "\(name): not upgraded")
                // A well-formed ping first, answered: the frame after it is what ends the socket.
                #expect(connection.send(RawFrames.client(RawFrames.ping, hello) + frame), "\(name): not sent")
                let (bytes, closed) = await connection.readBytesUntilClosed(within: .seconds(30))
                #expect(closed, "\(name): the connection was still open after 10 s")
                let frames = RawFrames.server(bytes)
                #expect(frames.first?.opcode == RawFrames.pong, "\(name): the well-formed ping was not answered: \(frames)")
                #expect(frames.last?.closeCode == 1002, "\(name): \(frames)")
            }
            #expect(await eventually(within: .seconds(10)) { server.openSockets == 0 }, "sockets still counted open")
        }
    }
}
