import NIOCore

#if canImport(Glibc)
    import Glibc
#elseif canImport(Musl)
    import Musl
#elseif canImport(Darwin)
    import Darwin
#endif

/// How the server sets up each accepted connection's socket: TCP keepalive, so that the kernel
/// finds a peer that vanished, and a small first receive buffer.
///
/// Both are about what an idle push socket costs. Hummingbird's WebSocket pings would find a
/// vanished peer too, but with a task per socket, asleep between pings, for the socket's life;
/// the kernel's probes cost nothing until they are due. (Clients still ping the server, which
/// keeps proxies and NATs on the way from closing a quiet connection.) NIO keeps each
/// connection's receive buffer for reuse at the size its reads have needed, starting from the
/// allocator's first size: 2 KiB by default, where a request head or a client's ping needs a
/// few hundred bytes. The buffer grows as soon as a read fills it.
struct ConnectionTuning: Sendable {
    /// Seconds of silence before the first probe.
    let keepAliveIdle: Int32
    /// Seconds between probes.
    let keepAliveInterval: Int32
    /// Probes unanswered before the kernel closes the connection.
    let keepAliveProbes: Int32
    /// The first receive buffer's size, in bytes.
    let initialReceiveBytes: Int
    /// How long sent data may wait for its acknowledgement before the kernel closes the
    /// connection (Linux's `TCP_USER_TIMEOUT`), in milliseconds: the dead-peer timeout.
    let userTimeoutMilliseconds: Int64

    /// Tuning that closes a vanished peer's connection about `deadPeerTimeout` after it fell
    /// silent: the first probe after half of it, three more spread over the other half.
    init(deadPeerTimeout: Duration, initialReceiveBytes: Int = 512) {
        let seconds = max(2, deadPeerTimeout.components.seconds)
        keepAliveIdle = Int32(clamping: seconds / 2)
        keepAliveInterval = Int32(clamping: max(1, (seconds - seconds / 2) / 3))
        keepAliveProbes = 3
        self.initialReceiveBytes = initialReceiveBytes
        userTimeoutMilliseconds = max(1_000, deadPeerTimeout.components.seconds * 1_000)
    }

    /// Applies the tuning to `channel`; on its event loop, before its first read.
    func apply(to channel: any Channel) throws {
        guard let options = channel.syncOptions else { return }
        try options.setOption(ChannelOptions.socketOption(.so_keepalive), value: 1)
        try options.setOption(Self.tcp(Self.keepAliveIdleOption), value: SocketOptionValue(keepAliveIdle))
        try options.setOption(Self.tcp(Int32(TCP_KEEPINTVL)), value: SocketOptionValue(keepAliveInterval))
        try options.setOption(Self.tcp(Int32(TCP_KEEPCNT)), value: SocketOptionValue(keepAliveProbes))
        #if os(Linux)
            // Keepalive probes go out only while nothing sent waits for its acknowledgement: a peer
            // that vanished just after a push would otherwise be held by the retransmissions, for
            // about 15 minutes. This bounds how long sent data may go unacknowledged.
            try options.setOption(Self.tcp(Int32(TCP_USER_TIMEOUT)), value: SocketOptionValue(clamping: userTimeoutMilliseconds))
        #endif
        try options.setOption(
            ChannelOptions.recvAllocator,
            value: AdaptiveRecvByteBufferAllocator(minimum: 64, initial: initialReceiveBytes, maximum: 65_536)
        )
    }

    /// Bounds the bytes a push socket's connection holds that its client has not read to about
    /// `bytesInFlight`: half in the kernel's send buffer, half in the channel's, past which the
    /// channel is no longer writable. On the channel's event loop, once it is a push socket.
    ///
    /// The channel's writability is what makes a slow reader's outbox keep only the newest value
    /// and starts its slow-reader timeout, and it only turns once the kernel refuses more. Linux
    /// grows a connection's send buffer on its own up to `tcp_wmem`'s maximum (4 MiB by default;
    /// 3.9 MB seen on loopback in the tests): a client that never read then hid up to a megabyte
    /// of pushes there, the channel stayed writable, and only the dead-peer timeout ended it. Setting `SO_SNDBUF` turns that growth off for this socket. It is asked for a
    /// quarter, since Linux doubles what it is given to allow for its own bookkeeping. It is
    /// portable, where counting the bytes not yet acknowledged (`SIOCOUTQ`) is Linux's alone and
    /// would need polling, since no event says when that count falls. HTTP connections keep the
    /// kernel's own sizing, which serves large answers better.
    static func boundPushBuffers(of channel: any Channel, to bytesInFlight: Int) throws {
        guard let options = channel.syncOptions else { return }
        let half = max(8_192, bytesInFlight / 2)
        try options.setOption(ChannelOptions.socketOption(.so_sndbuf), value: SocketOptionValue(clamping: half / 2))
        try options.setOption(ChannelOptions.writeBufferWaterMark, value: ChannelOptions.Types.WriteBufferWaterMark(low: half / 2, high: half))
    }

    private static func tcp(_ name: Int32) -> ChannelOptions.Types.SocketOption {
        ChannelOptions.Types.SocketOption(level: .tcp, name: NIOBSDSocket.Option(rawValue: name))
    }

    #if canImport(Darwin)
        private static let keepAliveIdleOption = Int32(TCP_KEEPALIVE)
    #else
        private static let keepAliveIdleOption = Int32(TCP_KEEPIDLE)
    #endif
}
