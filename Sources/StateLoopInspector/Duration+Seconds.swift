extension Duration {
    /// The duration in seconds, as a record's times are written.
    package var inSeconds: Double {
        Double(components.seconds) + Double(components.attoseconds) / 1e18
    }
}
