/// Deterministic randomness from a seed and a key, so that a decision depends on what it is
/// about (which request, which push) rather than on the order decisions happen to be asked in.
package struct SeededRandom: Sendable {
    package let seed: UInt64

    package init(seed: UInt64) {
        self.seed = seed
    }

    /// A number in `0..<1` for `key`, the same for the same seed and key in every run.
    package func unit(_ key: String) -> Double {
        Double(bits(key) >> 11) / Double(UInt64(1) << 53)
    }

    /// 64 random bits for `key`.
    package func bits(_ key: String) -> UInt64 {
        Self.mix(seed ^ Self.fnv1a(key))
    }

    /// A stable hash of `text`; Swift's `Hasher` is seeded per process, so it can't be used.
    static func fnv1a(_ text: String) -> UInt64 {
        var hash: UInt64 = 0xcbf2_9ce4_8422_2325
        for byte in text.utf8 {
            hash ^= UInt64(byte)
            hash = hash &* 0x0000_0100_0000_01b3
        }
        return hash
    }

    /// The SplitMix64 finaliser: spreads every input bit over the output.
    static func mix(_ value: UInt64) -> UInt64 {
        var z = value &+ 0x9e37_79b9_7f4a_7c15
        z = (z ^ (z >> 30)) &* 0xbf58_476d_1ce4_e5b9
        z = (z ^ (z >> 27)) &* 0x94d0_49bb_1331_11eb
        return z ^ (z >> 31)
    }
}
